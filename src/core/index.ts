/** The pure core: ids, errors, the session log, tree algorithms, the fold and append planning. */
export * from "./append-plan.js";
export * from "./entry.js";
export * from "./entry-builders.js";
export * from "./errors.js";
export * from "./fold.js";
export * from "./fork-plan.js";
export * from "./ids.js";
export * from "./import-plan.js";
export * from "./message-text.js";
export * from "./move-plan.js";
export * from "./session-log.js";
export * from "./tree.js";
