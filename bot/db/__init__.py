"""The database engines and the migrations runner: the core every feature's queries
run on.

Modules:
- ``backend``: What the store needs from a database engine, and the choice between SQLite
  and PostgreSQL.
- ``copy``: Copy an SQLite database into an empty PostgreSQL database, every table, in one
  go.
- ``dialect``: The store's statements as PostgreSQL takes them: ``?`` and ``:name`` become
  ``$n``.
- ``migrate``: Numbered migrations: ``NNNN_description.sql`` files, applied in order, each
  exactly once.
- ``opening``: Opening the database: PostgreSQL for a ``postgresql://`` URL, else an SQLite
  file, with pending migrations applied.
- ``pg_migrate``: PostgreSQL's numbered migrations:
  migrations/postgresql/NNNN_description.sql.
- ``postgres``: The PostgreSQL backend: an asyncpg pool behind bot/db/backend.py's
  ``Database``.
- ``rows``: Rows and values: the column lists the store selects, and their mapping to the
  models.
- ``shards``: The condition that keeps once-only work to a process's own shards' servers.
- ``sqlite``: The SQLite backend: one aiosqlite connection, shared or exclusive access to
  it, and transactions that always end (the interface is bot/db/backend.py's ``Database``).
"""
