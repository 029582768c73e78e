export { PostgresEngine, type PostgresEngineOptions } from "./postgres-engine.js";
export { MIGRATIONS, migrate, SCHEMA_VERSION } from "./schema.js";
