// Deep links (issue 20): the address's hash names what the page shows,
// `#assistant=<graph or id>&view=threads&thread=<id>&checkpoint=<id>`, so a link opens that
// thread at that checkpoint, and each step of the user's navigation is a history entry
// (back and forward work). Runs only replace the entry (a new thread is not a navigation).

const KEYS = ["assistant", "view", "thread", "checkpoint"];
export const VIEWS = ["run", "threads", "assistant"];

// The hash the page follows: the last one read by `takeHash` or written by `writeHash`. Back and
// forward change the address before their hashchange is handled; work that ends in between (a
// fetch) must not replace that entry with the route the page is leaving, or the user's step
// is lost (the hashchange would then show the old route).
let followed = location.hash;

/** What the hash asks for: {assistant, view, thread, checkpoint} (missing ones null). */
export function readHash(hash = location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const out = Object.fromEntries(KEYS.map((k) => [k, params.get(k) || null]));
  if (!VIEWS.includes(out.view)) out.view = out.thread ? "threads" : null;
  return out;
}

/** `readHash()`, and the page follows this address from now on. */
export function takeHash() {
  followed = location.hash;
  return readHash();
}

/** The name an assistant goes by in a link: its graph for a graph's default assistant. */
export function assistantKey(assistant) {
  return assistant.graph_id === assistant.name ? assistant.graph_id : assistant.assistant_id;
}

/** The assistant a link's name stands for, among `assistants`. */
export function findAssistant(assistants, key) {
  if (!key) return null;
  return assistants.find((a) => a.assistant_id === key)
    || assistants.find((a) => a.graph_id === key && a.name === key)
    || assistants.find((a) => a.graph_id === key) || null;
}

/** Put `route` in the address: a new history entry when `push`, else the current one. */
export function writeHash(route, push) {
  const params = new URLSearchParams();
  for (const k of KEYS) if (route[k]) params.set(k, route[k]);
  const hash = `#${params}`;
  if (!push && location.hash !== followed) return; // a back/forward not yet followed
  if (hash !== location.hash) {
    const url = `${location.pathname}${location.search}${hash}`;
    if (push) history.pushState(null, "", url);
    else history.replaceState(null, "", url);
  }
  followed = location.hash; // as the browser spells it
}
