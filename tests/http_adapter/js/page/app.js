// The page's script, bundled with esbuild at test time (test_browser.py): the official JS
// client in a browser, calling graphrun directly across origins, as a chat UI does.
import { Client } from "@langchain/langgraph-sdk";

const params = new URLSearchParams(location.search);
const apiUrl = params.get("api");
const client = new Client({ apiUrl });
let threadId = params.get("thread");
const $ = (id) => document.getElementById(id);
const show = (name, value) => { $(name).textContent = String(value); };

function pageUrl(thread) {
  return `?api=${encodeURIComponent(apiUrl)}&thread=${thread}`;
}

function render(messages) {
  $("messages").replaceChildren(...messages.map((message) => {
    const item = document.createElement("li");
    item.className = message.type;
    item.textContent = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
    return item;
  }));
}

async function refreshThreads() {
  const threads = await client.threads.search({ limit: 20, sortBy: "updated_at", sortOrder: "desc" });
  $("threads").replaceChildren(...threads.map((thread) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = pageUrl(thread.thread_id);
    link.dataset.threadId = thread.thread_id;
    const first = thread.values?.messages?.[0]?.content ?? "(empty)";
    link.textContent = `${first} (${thread.values?.messages?.length ?? 0})`;
    item.append(link);
    return item;
  }));
}

async function loadThread() {
  show("thread-id", threadId ?? "");
  if (!threadId) return;
  const state = await client.threads.getState(threadId);
  render(state.values?.messages ?? []);
  const history = await client.threads.getHistory(threadId, { limit: 100 });
  show("checkpoints", history.length);
}

async function send(text) {
  show("status", "streaming");
  if (!threadId) {
    threadId = (await client.threads.create()).thread_id;
    history.replaceState(null, "", pageUrl(threadId));
  }
  const streamed = {};
  let tokens = 0;
  const stream = client.runs.stream(threadId, "chat", {
    input: { messages: [{ type: "human", content: text }] },
    streamMode: ["messages-tuple", "values"],
  });
  for await (const part of stream) {
    if (part.event === "error") throw new Error(JSON.stringify(part.data));
    if (part.event === "messages") {
      const [chunk] = part.data;
      streamed[chunk.id] = (streamed[chunk.id] ?? "") + chunk.content;
      show("streaming", streamed[chunk.id]);
      tokens += 1;
    }
    if (part.event === "values") render(part.data.messages ?? []);
  }
  show("tokens", tokens);
  await loadThread();
  await refreshThreads();
  show("status", "ready");
}

function fail(error) {
  show("status", `error: ${error?.message ?? error}`);
}

$("form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("input").value;
  $("input").value = "";
  send(text).catch(fail);
});

Promise.all([loadThread(), refreshThreads()]).then(() => show("status", "ready"), fail);
