// Every public method of the official JS client (@langchain/langgraph-sdk), one call each, in
// order, on state the earlier rows made (issue 31 "both official SDKs' whole method lists").
// The parity scenario `sdk_methods_js` (tests/http_adapter/parity/scenarios/sdk_methods.py)
// runs it against `graphrun dev` and against `langgraph dev` and compares.
//
//   node sdk_methods.mjs URL     -> [{method, result} | {method, status, body}, ...] as JSON
//   node sdk_methods.mjs --list  -> {methods, rows, skipped}: what the SDK has, what runs here

import { Client } from "@langchain/langgraph-sdk";

const SCHEDULE = "0 0 1 1 *"; // once a year: no cron fires during the scenario

// Methods no row calls, and why (docs/differences.md names the same).
const SKIPPED = {
  "threads.stream": "the v2 event-streaming protocol (/threads/{id}/commands, " +
    "/threads/{id}/stream/events) is not served by graphrun",
};
// BaseClient's plumbing (protected in the TypeScript types), on every resource.
const PLUMBING = ["fetch", "prepareFetchOptions", "streamWithRetry"];

async function collect(parts, until) {
  const seen = [];
  for await (const part of parts) {
    seen.push({ event: part.event, data: part.data, ...(part.id ? { id: part.id } : {}) });
    if (until && until(part)) break;
  }
  return seen;
}

const runDone = (part) => part.event === "metadata" && part.data?.status === "run_done";

async function until(get, statuses) {
  for (let i = 0; i < 500; i++) {
    const value = await get();
    if (statuses.includes(JSON.stringify(value))) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// A run that waits until cancelled, seen in its first step (unrecorded; as the Python rows).
async function held(c, ctx) {
  if (ctx.held) await until(async () => (await c.runs.get(ctx.held, ctx.hold.run_id)).status,
                            ['"interrupted"']);
  ctx.held = (await c.threads.create()).thread_id;
  ctx.hold = await c.runs.create(ctx.held, "i31_hold", { input: { wait: true } });
  await until(async () => (await c.threads.getState(ctx.held)).next, ['["hold"]']);
}

const ROWS = [
  ["assistants.create", async (c, ctx) => (ctx.assistant = await c.assistants.create({
    graphId: "agent", config: { configurable: { k: 1 } }, metadata: { t: "js" }, name: "first",
    description: "one" }))],
  ["assistants.get", (c, ctx) => c.assistants.get(ctx.assistant.assistant_id)],
  ["assistants.update", (c, ctx) => c.assistants.update(ctx.assistant.assistant_id, {
    name: "second", metadata: { t: "js2" } })],
  ["assistants.getVersions", (c, ctx) => c.assistants.getVersions(ctx.assistant.assistant_id)],
  ["assistants.setLatest", (c, ctx) => c.assistants.setLatest(ctx.assistant.assistant_id, 1)],
  ["assistants.search", (c) => c.assistants.search({ metadata: { t: "js" } })],
  ["assistants.count", (c) => c.assistants.count({ graphId: "agent" })],
  ["assistants.getGraph", (c, ctx) => c.assistants.getGraph(ctx.assistant.assistant_id,
                                                            { xray: true })],
  ["assistants.getSchemas", (c, ctx) => c.assistants.getSchemas(ctx.assistant.assistant_id)],
  ["assistants.getSubgraphs", (c, ctx) => c.assistants.getSubgraphs(ctx.assistant.assistant_id,
                                                                    { recurse: true })],
  ["threads.create", async (c, ctx) => (ctx.thread = (await c.threads.create({
    metadata: { t: "js" } })).thread_id)],
  ["threads.get", (c, ctx) => c.threads.get(ctx.thread)],
  ["threads.update", (c, ctx) => c.threads.update(ctx.thread, { metadata: { u: 1 } })],
  ["threads.search", (c) => c.threads.search({ metadata: { t: "js" } })],
  ["threads.count", (c) => c.threads.count({ metadata: { t: "js" } })],
  ["runs.wait", (c, ctx) => c.runs.wait(ctx.thread, "agent", { input: { x: 1 } })],
  ["runs.stream", (c, ctx) => collect(c.runs.stream(ctx.thread, "agent", {
    input: { x: 2 }, streamMode: ["values", "updates"] }))],
  ["runs.create", async (c, ctx) => (ctx.run = await c.runs.create(ctx.thread, "agent", {
    input: { x: 3 }, streamResumable: true }))],
  ["runs.join", (c, ctx) => c.runs.join(ctx.thread, ctx.run.run_id)],
  ["runs.joinStream", (c, ctx) => collect(c.runs.joinStream(ctx.thread, ctx.run.run_id, {
    lastEventId: "0-0" }))],
  ["runs.get", (c, ctx) => c.runs.get(ctx.thread, ctx.run.run_id)],
  ["runs.list", (c, ctx) => c.runs.list(ctx.thread)],
  ["threads.joinStream", (c, ctx) => collect(c.threads.joinStream(ctx.thread, {
    lastEventId: "0-0" }), runDone)],
  ["threads.getState", (c, ctx) => c.threads.getState(ctx.thread)],
  ["threads.getHistory", (c, ctx) => c.threads.getHistory(ctx.thread, { limit: 2 })],
  ["threads.updateState", (c, ctx) => c.threads.updateState(ctx.thread, {
    values: { x: 10 }, asNode: "a" })],
  ["threads.patchState", (c, ctx) => c.threads.patchState(ctx.thread, { p: 1 })],
  ["threads.copy", (c, ctx) => c.threads.copy(ctx.thread)],
  ["runs.cancel", async (c, ctx) => {
    await held(c, ctx);
    return c.runs.cancel(ctx.held, ctx.hold.run_id, true);
  }],
  ["runs.cancelMany", async (c, ctx) => {
    await held(c, ctx);
    return c.runs.cancelMany({ threadId: ctx.held, runIds: [ctx.hold.run_id] });
  }],
  ["runs.delete", (c, ctx) => c.runs.delete(ctx.thread, ctx.run.run_id)],
  ["runs.createBatch", (c) => c.runs.createBatch([{ assistantId: "router",
                                                    input: { x: 1 } }])],
  ["crons.create", async (c, ctx) => (ctx.cron = await c.crons.create("agent", {
    schedule: SCHEDULE, input: { x: 1 } }))],
  ["crons.createForThread", (c, ctx) => c.crons.createForThread(ctx.thread, "agent", {
    schedule: SCHEDULE, input: { x: 1 } })],
  ["crons.search", (c, ctx) => c.crons.search({ assistantId: ctx.cron.assistant_id })],
  ["crons.count", (c, ctx) => c.crons.count({ assistantId: ctx.cron.assistant_id })],
  ["crons.update", (c, ctx) => c.crons.update(ctx.cron.cron_id, { schedule: "0 0 2 1 *" })],
  ["crons.delete", (c, ctx) => c.crons.delete(ctx.cron.cron_id)],
  ["store.putItem", (c) => c.store.putItem(["js", "a"], "k", { v: 1 })],
  ["store.getItem", (c) => c.store.getItem(["js", "a"], "k")],
  ["store.searchItems", (c) => c.store.searchItems(["js"])],
  ["store.listNamespaces", (c) => c.store.listNamespaces({ prefix: ["js"] })],
  ["store.deleteItem", (c) => c.store.deleteItem(["js", "a"], "k")],
  ["~ui.getComponent", (c) => c["~ui"].getComponent("agent", "card")],
  ["threads.prune", (c, ctx) => c.threads.prune([ctx.thread])],
  ["threads.delete", (c, ctx) => c.threads.delete(ctx.thread)],
  ["assistants.delete", (c, ctx) => c.assistants.delete(ctx.assistant.assistant_id)],
];

function methods(client) {
  const found = [];
  for (const [resource, sub] of Object.entries(client)) {
    if (!sub || typeof sub !== "object") continue;
    for (let p = Object.getPrototypeOf(sub); p && p !== Object.prototype;
      p = Object.getPrototypeOf(p)) {
      for (const name of Object.getOwnPropertyNames(p)) {
        if (name !== "constructor" && typeof sub[name] === "function"
            && !PLUMBING.includes(name)) found.push(`${resource}.${name}`);
      }
    }
  }
  return [...new Set(found)].sort();
}

// A method called through `counted` lands in `called`, to check each row calls its own.
function counting(client, called) {
  return new Proxy(client, { get: (target, resource) => {
    const sub = target[resource];
    if (!sub || typeof sub !== "object") return sub;
    return new Proxy(sub, { get: (inner, name) => {
      const value = inner[name];
      if (typeof value !== "function") return value;
      return (...args) => { called.add(`${String(resource)}.${String(name)}`);
                            return value.apply(inner, args); };
    } });
  } });
}

function failure(error) {
  const text = String(error.message ?? error).replace(/^HTTP \d+: /, "");
  let body;
  try { body = JSON.parse(text); } catch { body = { text }; }
  return { status: error.status ?? null, body };
}

async function main(url) {
  const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
  const called = new Set();
  const c = counting(client, called);
  const ctx = {};
  const log = [];
  for (const [method, row] of ROWS) {
    if (process.env.SDK_METHODS_DEBUG) console.error(method);
    called.clear();
    try {
      const result = await row(c, ctx);
      log.push({ method, result: result === undefined ? null : result });
    } catch (error) {
      log.push({ method, ...failure(error) });
    }
    // rows may call other methods first (setup); the row's own must be among them
    if (!called.has(method)) throw new Error(`row ${method} did not call it: ${[...called]}`);
  }
  console.log(JSON.stringify(log));
}

if (process.argv[2] === "--list") {
  console.log(JSON.stringify({ methods: methods(new Client({ apiUrl: "http://127.0.0.1:9" })),
                               rows: ROWS.map(([name]) => name), skipped: SKIPPED }));
} else {
  await main(process.argv[2]);
  process.exit(0); // the thread stream left after its run_done keeps a socket open
}
