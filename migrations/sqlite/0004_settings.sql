-- Settings every node of an installation shares, such as the key that signs download
-- URLs. A row is created once (INSERT … ON CONFLICT DO NOTHING) and then only read.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
