# The tic-tac-toe bot: docker build -t tictactoe-bot . && see "Hosting" in README.md to run it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATABASE_PATH=/app/data/tictactoe.db

# DATABASE_URL, when set (docker-compose.yml sets it), wins over DATABASE_PATH.
WORKDIR /app

# Dependencies first, so code changes don't reinstall them: the runtime lock, every
# package pinned and checked against its hash (regenerate it as README.md says).
COPY requirements/bot.txt ./requirements/bot.txt
RUN pip install --require-hashes -r requirements/bot.txt

# The bot itself, installed as a package from a throwaway copy: its build compiles the
# translations (setup.py, the one place they are compiled) and copies migrations/ into
# the installed package as bot/migrations/.
COPY pyproject.toml setup.py README.md /src/
COPY engine /src/engine
COPY bot /src/bot
COPY migrations /src/migrations
RUN pip install --no-deps /src && rm -rf /src

# An unprivileged user owning only the data folder; the database lives on a volume.
RUN useradd --system --uid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin bot \
    && mkdir -p /app/data \
    && chown bot:bot /app/data
VOLUME ["/app/data"]
USER bot

# SIGTERM (docker stop) lets clicks in flight finish and closes the database cleanly.
STOPSIGNAL SIGTERM
CMD ["python", "-m", "bot"]
