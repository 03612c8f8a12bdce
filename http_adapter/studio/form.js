// An input form generated from a JSON schema's top-level properties (issue 20), with a raw
// JSON toggle. Empty fields are left out of the input, so reducers and defaults apply.

import { h, parseJson, pretty } from "./dom.js";

function kind(schema) {
  const types = [schema?.type].flat().filter((t) => t && t !== "null");
  if (!types.length && schema?.anyOf) return kind(schema.anyOf.find((s) => s.type !== "null") || {});
  if (types.length !== 1) return "json";
  return { string: "string", integer: "number", number: "number", boolean: "boolean" }[types[0]] || "json";
}

function field(name, schema) {
  const k = schema?.enum ? "enum" : kind(schema);
  const attrs = { name, id: `f-${name}`, dataset: { field: name, kind: k } };
  if (k === "enum") return h("select", attrs, h("option", { value: "" }, ""), ...schema.enum.map((v) => h("option", { value: JSON.stringify(v) }, String(v))));
  if (k === "boolean") return h("select", attrs, h("option", { value: "" }, ""), h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
  if (k === "number") return h("input", { ...attrs, type: "number", step: schema.type === "integer" ? "1" : "any" });
  if (k === "string") return h("input", { ...attrs, type: "text" });
  return h("textarea", { ...attrs, rows: 2, placeholder: "JSON" });
}

function read(el) {
  const v = el.value;
  if (v === "") return undefined;
  const k = el.dataset.kind;
  if (k === "number") return Number(v);
  if (k === "boolean" || k === "enum") return JSON.parse(v);
  if (k === "string") return v;
  return parseJson(v, el.dataset.field);
}

/** A form for `schema`; `.value()` returns the input object, `.set(obj)` fills it. */
export function schemaForm(schema) {
  const props = schema?.properties || {};
  const fields = Object.entries(props).map(([name, sub]) => [name, field(name, sub)]);
  const raw = h("textarea.raw", { rows: 6, spellcheck: false, hidden: true, dataset: { role: "raw-input" } });
  const rawToggle = h("input", { type: "checkbox", dataset: { role: "raw-toggle" } });
  const grid = h("div.form-grid", {}, fields.map(([name, el]) => [h("label", { for: `f-${name}` }, name), el]));
  if (!fields.length) rawToggle.checked = true;
  const form = h("div.schema-form", {}, grid, raw, h("label.inline", {}, rawToggle, " raw JSON"));
  const readFields = () => {
    const out = {};
    for (const [name, el] of fields) {
      const v = read(el);
      if (v !== undefined) out[name] = v;
    }
    return out;
  };
  const value = () => (rawToggle.checked ? parseJson(raw.value, "input") ?? {} : readFields());
  const set = (obj) => {
    raw.value = pretty(obj || {});
    for (const [name, el] of fields) {
      const v = obj?.[name];
      el.value = v === undefined || v === null ? "" : el.dataset.kind === "string" ? v : el.dataset.kind === "number" ? String(v) : JSON.stringify(v);
    }
  };
  const sync = () => {
    grid.hidden = rawToggle.checked;
    raw.hidden = !rawToggle.checked;
  };
  rawToggle.addEventListener("change", () => {
    if (rawToggle.checked) {
      try { raw.value = pretty(readFields()); } catch { /* keep the text */ }
    } else {
      try { set(parseJson(raw.value, "input")); } catch { /* keep the fields */ }
    }
    sync();
  });
  sync();
  return Object.assign(form, { value, set });
}
