export { PostgresEngine, type PostgresEngineOptions } from "./postgres-engine.js";
export { MIGRATIONS, migrate, SCHEMA_VERSION } from "./schema.js";
export type { PgSealOutcome, SealHooks } from "./seal-sessions.js";
export type { PgEncryption } from "./sealing.js";
