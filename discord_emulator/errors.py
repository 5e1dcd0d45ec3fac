"""Errors: the JSON errors the emulated API answers with, and the ones the test API raises."""

from __future__ import annotations

from typing import Any

__all__ = ["APIError", "FormErrors", "UserActionError"]

Path = tuple[str | int, ...]


class UserActionError(Exception):
    """A simulated user tried something the Discord client would not let them do.

    Raised by the test-side actions (running a command, clicking a button) instead of sending
    anything to the bot: an unknown command, a bad option value, a disabled button, a message
    the user cannot see.
    """


class APIError(Exception):
    """An error answer of the emulated REST API, in Discord's ``{"code", "message"}`` shape."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        *,
        errors: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    @classmethod
    def invalid_field(cls, path: Path, code: str, message: str) -> APIError:
        """A 400 50035 "Invalid Form Body" naming one bad field."""
        errors = FormErrors()
        errors.add(path, code, message)
        return cls(400, 50035, "Invalid Form Body", errors=errors.tree)

    def body(self) -> dict[str, Any]:
        """The JSON body Discord would send for this error."""
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors is not None:
            body["errors"] = self.errors
        return body


class FormErrors:
    """Collects field errors into Discord's nested ``errors`` object for a 50035 answer.

    A path such as ``("data", "components", 0, "components", 5)`` becomes
    ``{"data": {"components": {"0": {"components": {"5": {"_errors": [...]}}}}}}``.
    """

    def __init__(self) -> None:
        self.tree: dict[str, Any] = {}

    def __bool__(self) -> bool:
        return bool(self.tree)

    def add(self, path: Path, code: str, message: str) -> None:
        node = self.tree
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def codes(self) -> list[str]:
        """Every error code collected, in no particular order (handy in assertions)."""
        found: list[str] = []

        def walk(node: dict[str, Any]) -> None:
            for key, value in node.items():
                if key == "_errors":
                    found.extend(entry["code"] for entry in value)
                else:
                    walk(value)

        walk(self.tree)
        return found

    def raise_if_any(self) -> None:
        if self.tree:
            raise APIError(400, 50035, "Invalid Form Body", errors=self.tree)
