// The Assistant view (issue 20): an assistant's config and context, saved as a new version
// (PATCH /assistants/{id}), its versions, and which one is latest.

import { api } from "./api.js";
import { h, fill, parseJson, pretty } from "./dom.js";

export function assistantView(app) {
  const a = app.assistant;
  if (!a) return h("p", {}, "No assistant.");
  const config = h("textarea#assistant-config", { rows: 6, spellcheck: false });
  const context = h("textarea#assistant-context", { rows: 4, spellcheck: false });
  config.value = pretty(a.config || {});
  context.value = pretty(a.context || {});
  const versions = h("ul#versions.list");

  const edited = () => oneOfTheMirrors(a, parseJson(config.value, "config") || {}, parseJson(context.value, "context") || {});
  const reload = async (assistant) => {
    const i = app.assistants.findIndex((x) => x.assistant_id === assistant.assistant_id);
    if (i >= 0) app.assistants[i] = assistant;
    else app.assistants.push(assistant);
    app.assistant = assistant;
    app.renderMenu();
    app.showView("assistant");
  };
  const save = async () => {
    try {
      await reload(await api(`/assistants/${a.assistant_id}`, { method: "PATCH", body: edited() }));
    } catch (error) {
      app.fail(error);
    }
  };
  const saveNew = async () => {
    try {
      const name = `${a.graph_id} (copy)`;
      const created = await api("/assistants", { method: "POST", body: { graph_id: a.graph_id, name, ...edited() } });
      app.assistants.push(created);
      app.renderMenu();
      pick(created.assistant_id);
    } catch (error) {
      app.fail(error);
    }
  };
  const makeLatest = async (version) => {
    try {
      await reload(await api(`/assistants/${a.assistant_id}/latest`, { method: "POST", body: { version } }));
    } catch (error) {
      app.fail(error);
    }
  };
  api(`/assistants/${a.assistant_id}/versions`, { method: "POST", body: { limit: 50 } }).then((list) => fill(versions,
    list.map((v) => h("li", { dataset: { version: v.version } }, `v${v.version} `, h("span.muted", {}, (v.created_at || "").slice(0, 19).replace("T", " ")), " ",
      h("code", {}, JSON.stringify(v.config?.configurable || {})), " ",
      v.version === a.version ? h("b", {}, "latest") : h("button", { onclick: () => makeLatest(v.version) }, "make latest"))))).catch(app.fail);

  return h("div.assistant-view", {},
    h("h3", {}, "Assistants"), assistantList(app),
    h("h3", {}, a.name, " ", h("span.muted", {}, `graph ${a.graph_id} · v${a.version}`)),
    h("p", {}, h("code#assistant-id", {}, a.assistant_id)),
    h("label", { for: "assistant-config" }, "config"), config,
    h("label", { for: "assistant-context" }, "context"), context,
    h("div.row.actions", {}, h("button#save-version.primary", { onclick: save }, "Save version"),
      h("button#save-new", { onclick: saveNew }, "Save as new assistant")),
    h("h3", {}, "Versions"), versions);
}

const same = (x, y) => JSON.stringify(x ?? {}) === JSON.stringify(y ?? {});

/** The PATCH body. The server mirrors `config.configurable` into `context` and back, and
 * refuses both at once (400), so the edited one is sent (issue 30 item 4: the second save of
 * an unchanged mirror failed); both, when both were edited, for the server to say why not. */
function oneOfTheMirrors(a, config, context) {
  const configurable = config.configurable || {};
  if (!Object.keys(configurable).length || !Object.keys(context).length) return { config, context };
  const contextEdited = !same(context, a.context);
  if (!contextEdited) return { config };
  if (!same(configurable, a.config?.configurable)) return { config, context };
  const { configurable: _, ...rest } = config;
  return { config: rest, context };
}

/** Select an assistant as the header's menu does. */
function pick(id) {
  const select = document.getElementById("assistant");
  select.value = id;
  select.dispatchEvent(new Event("change"));
}

/** Every assistant, by graph; a click selects it (as the header's menu does). */
function assistantList(app) {
  return h("ul#assistant-list.list", {}, app.assistants.map((x) => h("li", {
    class: x.assistant_id === app.assistant.assistant_id ? "selected" : null,
    dataset: { assistantId: x.assistant_id, graph: x.graph_id }, onclick: () => pick(x.assistant_id),
  }, h("b", {}, x.name), " ", h("span.muted", {}, `graph ${x.graph_id} · v${x.version}`),
    x.metadata?.created_by === "system" ? h("span.muted", {}, " · built in") : null)));
}
