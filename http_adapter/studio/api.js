// The studio's only way out: same-origin calls to the documented API (issue 20), with the
// API key (X-Api-Key, or a bearer token for custom auth) kept in sessionStorage. A 401 asks for
// a key; a 403 is the server knowing who you are and refusing the action: another key would
// not be asked for, the call fails with a "not allowed" error instead.

const KEY = "graphrun.studio.key";
const SCHEME = "graphrun.studio.scheme";
let askForKey = async () => null; // set by the app: shows the key dialog

/** The API's base URL: the page lives at <base>/studio/. */
export const BASE = new URL("..", document.baseURI).pathname.replace(/\/$/, "");

export function onKeyNeeded(ask) {
  askForKey = ask;
}

export function credentials() {
  return { key: sessionStorage.getItem(KEY) || "", scheme: sessionStorage.getItem(SCHEME) || "x-api-key" };
}

export function setCredentials(key, scheme) {
  if (key) {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(SCHEME, scheme || "x-api-key");
  } else {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(SCHEME);
  }
}

function headers(extra = {}) {
  const out = { ...extra };
  const { key, scheme } = credentials();
  if (key && scheme === "bearer") out.Authorization = `Bearer ${key}`;
  else if (key) out["X-Api-Key"] = key;
  return out;
}

/** An API error: the status and the server's `detail`. */
export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
  }

  get denied() {
    return this.status === 403;
  }
}

async function send(path, { method = "GET", body, accept = "application/json", signal } = {}) {
  for (;;) {
    const init = { method, signal, headers: headers({ Accept: accept }) };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
    const response = await fetch(BASE + path, init);
    if (response.status !== 401) return response;
    const detail = await detailOf(response);
    if (!(await askForKey(detail))) throw new ApiError(response.status, detail);
  }
}

async function detailOf(response) {
  try {
    const data = await response.json();
    return data?.detail ?? data;
  } catch {
    return response.statusText;
  }
}

/** Call an endpoint; the decoded JSON (null for an empty body), ApiError on 4xx/5xx. */
export async function api(path, options = {}) {
  const response = await send(path, options);
  if (!response.ok) throw new ApiError(response.status, await detailOf(response));
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/** Stream a run: calls onEvent(name, data) for each SSE event until the body ends. */
export async function streamRun(path, body, onEvent, signal) {
  const response = await send(path, { method: "POST", body, accept: "text/event-stream", signal });
  if (!response.ok) throw new ApiError(response.status, await detailOf(response));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const frames = buffer.split(/\r?\n\r?\n/); // one pass per chunk, not per event
    buffer = frames.pop();
    for (const frame of frames) dispatch(frame, onEvent);
  }
  if (buffer.trim()) dispatch(buffer, onEvent);
}

function dispatch(frame, onEvent) {
  let name = "message";
  const data = [];
  for (const line of frame.split(/\r?\n/)) {
    if (line.startsWith(":")) continue; // heartbeat comment
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return;
  const text = data.join("\n");
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  onEvent(name, parsed);
}
