import type { Scenario } from "../lib/context.js";
import { appendSequential } from "./s1-append-sequential.js";
import { appendManySessions } from "./s2-append-many-sessions.js";
import { appendOneSession } from "./s3-append-one-session.js";
import { getStateWarm } from "./s4-get-state-warm.js";
import { getStateCold } from "./s5-get-state-cold.js";
import { listSessions } from "./s6-list-sessions.js";
import { watchFanout } from "./s7-watch-fanout.js";
import { memory } from "./s8-memory.js";
import { embeddedVsPi } from "./s9-embedded-vs-pi.js";
import { postgresRows } from "./s10-postgres.js";
import { findSessions } from "./s11-find-sessions.js";
import { adkListSessions } from "./sa-adk-list-sessions.js";
import { bigParts } from "./sb-big-parts.js";
import { encryption } from "./se-encryption.js";
import { nativeGrpc } from "./sg-native-grpc.js";
import { langgraphSavers } from "./sl-langgraph.js";
import { observabilityCost } from "./so-observability.js";
import { usageReport } from "./su-usage-report.js";
import { viewer } from "./sv-viewer.js";

/** Every scenario of `npm run bench`, in table order. */
export const SCENARIOS: readonly Scenario[] = [
  appendSequential,
  appendManySessions,
  appendOneSession,
  getStateWarm,
  getStateCold,
  listSessions,
  watchFanout,
  memory,
  nativeGrpc,
  embeddedVsPi,
  postgresRows,
  findSessions,
  bigParts,
  observabilityCost,
  adkListSessions,
  langgraphSavers,
  viewer,
  encryption,
  usageReport,
];
