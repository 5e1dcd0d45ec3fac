# The tic-tac-toe bot: docker build -t tictactoe-bot . && see "Hosting" in README.md to run it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATABASE_PATH=/app/data/tictactoe.db

WORKDIR /app

# Dependencies first (from pyproject.toml), so code changes don't reinstall them.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The bot runs from source: bot/storage.py finds migrations/ next to the bot package.
COPY engine ./engine
COPY bot ./bot
COPY migrations ./migrations

# An unprivileged user owning only the data folder; the database lives on a volume.
RUN useradd --system --uid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin bot \
    && mkdir -p /app/data \
    && chown bot:bot /app/data
VOLUME ["/app/data"]
USER bot

# SIGTERM (docker stop) lets clicks in flight finish and closes the database cleanly.
STOPSIGNAL SIGTERM
CMD ["python", "-m", "bot"]
