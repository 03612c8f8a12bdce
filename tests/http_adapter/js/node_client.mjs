// The official JS client (@langchain/langgraph-sdk) against a graphrun server, as a chat front
// end calls it (issue 18 "Proof"): a streamed chat turn, an interrupt and its resume, and a
// background run joined with runs.joinStream. Prints one JSON object for the pytest test
// (tests/http_adapter/test_js_client.py) to assert on.
//
//   node node_client.mjs http://127.0.0.1:2024

import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.argv[2] });

async function collect(stream) {
  const events = [];
  for await (const part of stream) events.push({ event: part.event, data: part.data });
  return events;
}

const human = (content) => ({ messages: [{ type: "human", content }] });

const thread = await client.threads.create();
let created = null;
const chat = await collect(client.runs.stream(thread.thread_id, "chat", {
  input: human("hello"),
  streamMode: ["messages-tuple", "values"],
  onRunCreated: (meta) => { created = meta; },  // read from Content-Location
}));

const ask = await collect(client.runs.stream(thread.thread_id, "chat", {
  input: human("ask me"),
  streamMode: ["values", "updates"],
}));
const interrupted = await client.threads.get(thread.thread_id);
const resumed = await collect(client.runs.stream(thread.thread_id, "chat", {
  command: { resume: "yes" },
  streamMode: ["values", "messages-tuple"],
}));

const background = await client.runs.create(thread.thread_id, "chat", {
  input: human("slow please"),
  streamMode: ["values", "messages-tuple"],
});
const joined = await collect(client.runs.joinStream(thread.thread_id, background.run_id));
const finished = await client.runs.get(thread.thread_id, background.run_id);
const history = await client.threads.getHistory(thread.thread_id);

console.log(JSON.stringify({
  thread_id: thread.thread_id,
  created,
  chat,
  ask,
  interrupted_status: interrupted.status,
  interrupts: interrupted.interrupts,
  resumed,
  background,
  joined,
  finished_status: finished.status,
  history_length: history.length,
}));
