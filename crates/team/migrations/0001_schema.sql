-- hookd's team plane: the schema, the fleet and the shipped decisions.
-- Applied once by `hookd team init` (crates/team/src/migrate.rs).
CREATE SCHEMA IF NOT EXISTS hookd;

-- One row per machine, kept current by its daemon.
CREATE TABLE hookd.fleet (
    machine    text PRIMARY KEY,
    -- The database role that wrote the row: row-level security (0002)
    -- lets a machine's role touch only its own rows.
    db_role    name NOT NULL DEFAULT current_user,
    host       text NOT NULL,
    os_user    text NOT NULL,
    version    text NOT NULL,
    agents     jsonb NOT NULL DEFAULT '[]',
    policy     jsonb NOT NULL DEFAULT '{}',
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen  timestamptz NOT NULL DEFAULT now()
);

-- Every decision of every machine, idempotent by (machine, seq).
CREATE TABLE hookd.decisions (
    machine  text NOT NULL,
    seq      bigint NOT NULL,
    db_role  name NOT NULL DEFAULT current_user,
    at       timestamptz NOT NULL,
    agent    text,
    verdict  text,
    rule     text,
    revision text,
    chain    text NOT NULL,
    record   jsonb NOT NULL,
    PRIMARY KEY (machine, seq)
);
CREATE INDEX decisions_at ON hookd.decisions (at);
