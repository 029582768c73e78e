#!/usr/bin/env node
// The sessiond command. The sources are TypeScript run through tsx, so the
// package needs no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
