// Composing an edit: sources (uploaded files or URLs), the pipeline (only commands that
// take what the step before makes are offered, from GET /v1/commands), options (with the
// catalog's ranges), the request as curl or CLI, and a dry run of it as it changes.

const $ = (id) => document.getElementById(id);

/// An element: `el("li", {class: "x", text: "y", attrs: {...}, on: {click: f}}, ...children)`.
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  if (props.class) node.className = props.class;
  if (props.text !== undefined) node.textContent = props.text;
  for (const [k, v] of Object.entries(props.attrs || {})) {
    if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const [k, f] of Object.entries(props.on || {})) node.addEventListener(k, f);
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

const state = {
  catalog: new Map(), // command name → attributes (GET /v1/commands)
  sources: [], // {key, name, origin: "file"|"url", file, size, format, status, progress, src, error, upload}
  commands: [],
  options: {}, // option name → the text typed
  tab: "curl",
  edit: null, // the Edit document shown in the result card
  follow: null, // the long-poll loop following `edit`
  plan: { timer: null, abort: null },
};

const VIDEO_FORMATS = new Set(["mp4", "mov", "webm", "mkv", "avi", "ts", "3gp", "ogv"]);
const EXTENSIONS = { jpg: "jpeg", jpeg: "jpeg", png: "png", webp: "webp", gif: "gif", mp4: "mp4", m4v: "mp4", mov: "mov",
  tif: "tiff", tiff: "tiff", bmp: "bmp", heic: "heic", heif: "heic", avif: "avif", webm: "webm", mkv: "mkv", avi: "avi", ts: "ts", mts: "ts", "3gp": "3gp", "3g2": "3gp", ogv: "ogv", ogg: "ogv" };

/// The format of a file from its first bytes, as the service detects it (never the name).
function formatFromBytes(b) {
  const ascii = (from, to) => String.fromCharCode(...b.slice(from, to));
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "jpeg";
  if (b[0] === 0x89 && ascii(1, 4) === "PNG") return "png";
  if (ascii(0, 4) === "GIF8") return "gif";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "webp";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "AVI ") return "avi";
  if (ascii(4, 8) === "ftyp") {
    const brand = ascii(8, 12);
    if (brand === "qt  ") return "mov";
    if (brand.startsWith("3g")) return "3gp";
    if (brand === "avif" || brand === "avis") return "avif";
    if (["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].includes(brand)) return null; // the dry run tells HEIC from AVIF
    return "mp4";
  }
  if (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return ascii(0, 64).includes("webm") ? "webm" : "mkv";
  if (ascii(0, 4) === "OggS") return "ogv";
  if (b[0] === 0x47 && b[188] === 0x47 && b[376] === 0x47) return "ts";
  if (ascii(0, 4) === "II*\0" || ascii(0, 4) === "MM\0*") return "tiff";
  if (ascii(0, 2) === "BM") return "bmp";
  if (["moov", "mdat", "wide", "free"].includes(ascii(4, 8))) return "mov";
  return null;
}

function formatFromUrl(url) {
  const path = url.split(/[?#]/)[0];
  return EXTENSIONS[(path.split(".").pop() || "").toLowerCase()] || null;
}

/// Text whose `backticked` words are shown as code.
function withCode(text) {
  return text.split("`").map((part, i) => (i % 2 ? el("code", { text: part }) : part));
}

function humanBytes(n) {
  if (n === undefined || n === null) return "";
  const units = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i += 1; }
  return `${n >= 10 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

// ---- sources ---------------------------------------------------------------------

let sourceKeys = 0;

async function addFiles(files) {
  for (const file of files) {
    const source = { key: ++sourceKeys, name: file.name, origin: "file", file, size: file.size,
      format: null, status: "uploading", progress: 0, src: null, error: null };
    if (file.type.startsWith("image/")) source.thumb = URL.createObjectURL(file);
    state.sources.push(source);
    source.format = formatFromBytes(new Uint8Array(await file.slice(0, 512).arrayBuffer()));
    startUpload(source);
  }
  changed();
}

function startUpload(source) {
  source.status = "uploading";
  source.error = null;
  source.upload = Api.upload(source.file, (fraction) => {
    source.progress = fraction;
    updateSourceProgress(source);
  });
  source.upload.done.then((doc) => {
    source.status = "ready";
    source.src = doc.attributes.src;
    changed();
  }, (e) => {
    if (e.name === "AbortError") return;
    source.status = "error";
    source.error = e;
    changed();
  });
}

function addUrl(url) {
  state.sources.push({ key: ++sourceKeys, name: url, origin: "url", format: formatFromUrl(url),
    status: "ready", src: url, error: null });
  changed();
}

function removeSource(key) {
  const source = state.sources.find((s) => s.key === key);
  if (source && source.upload && source.status === "uploading") source.upload.abort();
  if (source && source.thumb) URL.revokeObjectURL(source.thumb);
  state.sources = state.sources.filter((s) => s.key !== key);
  changed();
}

function renderSources() {
  const list = $("source-list");
  list.replaceChildren(...state.sources.map((s, i) => {
    const status = s.status === "uploading" ? `uploading ${Math.round(s.progress * 100)} %`
      : s.status === "error" ? "upload failed" : s.origin === "file" ? "uploaded" : "URL";
    const meta = [s.format ? s.format.toUpperCase() : "format found when checked", humanBytes(s.size), status]
      .filter(Boolean).join(" · ");
    const thumb = s.thumb ? el("img", { class: "thumb", attrs: { src: s.thumb, alt: "" } })
      : el("span", { class: "thumb icon", text: s.format && VIDEO_FORMATS.has(s.format) ? "▶" : "◇", attrs: { "aria-hidden": "true" } });
    const item = el("li", { class: "source", attrs: { "data-key": s.key, "data-pointer": `/assets/${i}/src` } },
      thumb,
      el("div", { class: "source-body" },
        el("div", { class: "source-name", text: s.name }),
        el("div", { class: "source-meta", text: meta }),
        s.status === "uploading" ? el("progress", { attrs: { max: 1, value: s.progress, "aria-label": `Upload of ${s.name}` } }) : null,
        s.error ? el("div", { class: "field-error", text: s.error.message }) : null),
      s.status === "error" ? el("button", { class: "link-button", text: "Retry", attrs: { type: "button" }, on: { click: () => { startUpload(s); changed(); } } }) : null,
      el("button", { class: "icon-button", text: "×", attrs: { type: "button", "aria-label": `Remove ${s.name}` }, on: { click: () => removeSource(s.key) } }));
    return item;
  }));
}

function updateSourceProgress(source) {
  const item = document.querySelector(`li[data-key="${source.key}"]`);
  if (!item) return;
  const bar = item.querySelector("progress");
  if (bar) bar.value = source.progress;
  item.querySelector(".source-meta").textContent =
    [source.format && source.format.toUpperCase(), humanBytes(source.size), `uploading ${Math.round(source.progress * 100)} %`]
      .filter(Boolean).join(" · ");
}

// ---- the pipeline ------------------------------------------------------------------

/// What `command` makes of `format` (null: not known yet), the format option included.
function outputOf(command, format) {
  const spec = state.catalog.get(command);
  if (spec.formatOption && state.options[spec.formatOption]) {
    const named = state.options[spec.formatOption];
    return named === "jpg" ? "jpeg" : named;
  }
  if (format && spec.outputs[format]) return spec.outputs[format];
  const made = new Set(Object.values(spec.outputs));
  return made.size === 1 ? [...made][0] : null;
}

/// The formats going into step `index`, one per source (null where not known).
function formatsInto(index) {
  let formats = state.sources.map((s) => s.format);
  for (const command of state.commands.slice(0, index)) formats = formats.map((f) => outputOf(command, f));
  return formats;
}

/// Why step `index` cannot run on what it is given, or null.
function stepProblem(index) {
  const spec = state.catalog.get(state.commands[index]);
  const refused = [...new Set(formatsInto(index).filter((f) => f && !spec.inputs.includes(f)))];
  if (!refused.length) return null;
  return `${state.commands[index]} takes ${spec.inputs.join(", ")}; it would be given ${refused.join(", ")}.`;
}

function offeredCommands() {
  const formats = formatsInto(state.commands.length).filter(Boolean);
  return [...state.catalog.entries()].filter(([, spec]) => formats.every((f) => spec.inputs.includes(f))).map(([name]) => name);
}

function describeFlow(index) {
  const show = (formats) => [...new Set(formats.map((f) => f || "?"))].join(", ");
  return `${show(formatsInto(index))} → ${show(formatsInto(index + 1))}`;
}

function renderPipeline() {
  $("step-list").replaceChildren(...state.commands.map((command, i) => {
    const spec = state.catalog.get(command);
    const problem = stepProblem(i);
    return el("li", { class: "step" + (problem ? " invalid" : ""), attrs: { "data-pointer": `/commands/${i}` } },
      el("span", { class: "step-index", text: String(i + 1), attrs: { "aria-hidden": "true" } }),
      el("div", { class: "step-body" },
        el("div", { class: "step-name" }, el("code", { text: command }), el("span", { class: "flow", text: describeFlow(i) })),
        el("div", { class: "step-summary" }, ...withCode(spec.summary)),
        problem ? el("div", { class: "field-error", text: problem }) : null),
      i > 0 ? el("button", { class: "icon-button", text: "↑", attrs: { type: "button", "aria-label": `Move ${command} up` },
        on: { click: () => { state.commands.splice(i - 1, 0, state.commands.splice(i, 1)[0]); pipelineChanged(); } } }) : null,
      el("button", { class: "icon-button", text: "×", attrs: { type: "button", "aria-label": `Remove ${command}` },
        on: { click: () => { state.commands.splice(i, 1); pipelineChanged(); } } }));
  }));
  const offered = offeredCommands();
  const picker = $("command-picker");
  const kept = picker.value;
  picker.replaceChildren(...offered.map((name) => el("option", { text: name, attrs: { value: name, title: state.catalog.get(name).summary } })));
  if (offered.includes(kept)) picker.value = kept;
  picker.disabled = $("add-command").disabled = offered.length === 0;
  const known = [...new Set(formatsInto(state.commands.length).filter(Boolean))];
  $("command-hint").textContent = !state.catalog.size ? "Loading the command catalog…"
    : !offered.length ? `No command takes ${known.join(", ")}.`
    : known.length ? `Offered: the commands that take ${known.join(", ")}.`
    : "Add a source to see only the commands that take it.";
}

function optionHint(spec) {
  const fallback = spec.default === null ? "" : ` · default ${spec.default}`;
  if (spec.type === "string" && spec.enum) return `one of ${spec.enum.join(", ")}${spec.default === null ? "; default: the input's format" : fallback}`;
  if (spec.type === "string" && spec.pattern) return `a colour: #RRGGBB or #RRGGBBAA${fallback}`;
  if (spec.type === "string") return `${spec.minLength}–${spec.maxLength} characters`;
  if (spec.type === "boolean") return `true or false${fallback}`;
  const whole = spec.type === "integer" ? "whole, " : "";
  return `${whole}${spec.minimum} ${spec.exclusiveMinimum ? "<" : "≤"} ${spec.name} ≤ ${spec.maximum}${fallback}`;
}

/// Why the text typed for `spec` is refused, or null.
function optionProblem(spec, text) {
  if (text === "" || spec.enum || spec.type === "boolean") return null;
  if (spec.type === "string" && spec.pattern) return new RegExp(spec.pattern).test(text) ? null : `${spec.name} must be #RRGGBB or #RRGGBBAA.`;
  if (spec.type === "string") return [...text].length > spec.maxLength ? `${spec.name} is too long.` : null;
  const value = Number(text);
  const low = spec.exclusiveMinimum ? value <= spec.minimum : value < spec.minimum;
  const fraction = spec.type === "integer" && !Number.isInteger(value);
  if (!Number.isFinite(value) || low || fraction || value > spec.maximum) return `${spec.name} must be ${optionHint(spec).split(" · ")[0]}.`;
  return null;
}

/// The input an option is typed into: a list for values to pick, a box otherwise.
function optionInput(spec, id) {
  if (spec.enum) {
    const none = spec.default === null ? "the input's format" : `default (${spec.default})`;
    return el("select", { attrs: { id } }, el("option", { text: none, attrs: { value: "" } }),
      ...spec.enum.filter((v) => v !== "jpg").map((v) => el("option", { text: v, attrs: { value: v } })));
  }
  if (spec.type === "boolean") {
    return el("select", { attrs: { id } }, el("option", { text: `default (${spec.default})`, attrs: { value: "" } }),
      ...["true", "false"].map((v) => el("option", { text: v, attrs: { value: v } })));
  }
  if (spec.type === "string") return el("input", { attrs: { id, type: "text", maxlength: spec.maxLength || 9, placeholder: spec.default || "" } });
  const step = spec.type === "integer" ? "1" : "any";
  return el("input", { attrs: { id, type: "number", step, inputmode: "decimal", min: spec.minimum, max: spec.maximum, placeholder: spec.default === null ? "" : String(spec.default) } });
}

/// The JSON value of the text typed for `spec`.
function optionValue(spec, text) {
  if (spec.type === "number" || spec.type === "integer") return Number(text);
  if (spec.type === "boolean") return text === "true";
  return text;
}

/// The options the pipeline's commands read, each once.
function pipelineOptions() {
  const seen = new Map();
  for (const command of state.commands) {
    for (const spec of state.catalog.get(command).options) if (!seen.has(spec.name)) seen.set(spec.name, { spec, command });
  }
  return [...seen.values()];
}

function renderOptions() {
  const options = pipelineOptions();
  for (const name of Object.keys(state.options)) if (!options.some((o) => o.spec.name === name)) delete state.options[name];
  $("option-list").replaceChildren(...options.map(({ spec, command }) => {
    const id = "option-" + spec.name;
    const input = optionInput(spec, id);
    input.value = state.options[spec.name] || "";
    input.addEventListener("input", () => {
      state.options[spec.name] = input.value.trim();
      if (!state.options[spec.name]) delete state.options[spec.name];
      if (spec.enum) renderPipeline();
      markOption(spec, input);
      requestChanged();
    });
    const row = el("div", { class: "option", attrs: { "data-pointer": "/options/" + spec.name } },
      el("label", { attrs: { for: id } }, el("code", { text: spec.name }), el("span", { class: "muted", text: ` (${command})` })),
      input,
      el("div", { class: "hint", text: optionHint(spec) }),
      el("div", { class: "field-error" }));
    markOption(spec, input, row);
    return row;
  }));
}

function markOption(spec, input, row = input.closest(".option")) {
  const problem = optionProblem(spec, input.value.trim());
  input.setAttribute("aria-invalid", problem ? "true" : "false");
  row.querySelector(".field-error").textContent = problem || "";
}

// ---- the request -------------------------------------------------------------------

function requestBody() {
  const body = {
    assets: state.sources.map((s) => ({ type: s.format && VIDEO_FORMATS.has(s.format) ? "video" : "image", src: s.src || `<${s.name}: uploading>` })),
    commands: [...state.commands],
  };
  const options = {};
  for (const { spec } of pipelineOptions()) {
    const text = state.options[spec.name];
    if (text) options[spec.name] = optionValue(spec, text);
  }
  if (Object.keys(options).length) body.options = options;
  return body;
}

/// Why the edit cannot be sent yet, or null.
function notReady() {
  if (!Api.token) return "Enter your API token first.";
  if (!state.sources.length) return "Add a source.";
  if (state.sources.some((s) => s.status === "uploading")) return "Waiting for the uploads to finish…";
  if (state.sources.some((s) => s.status === "error")) return "Remove or retry the failed upload.";
  if (!state.commands.length) return "Add a command.";
  if (state.commands.some((_, i) => stepProblem(i))) return "Fix the pipeline: a command is given a format it does not take.";
  if (pipelineOptions().some(({ spec }) => optionProblem(spec, state.options[spec.name] || ""))) return "Fix the options.";
  return null;
}

const shellQuote = (s) => `'${s.replace(/'/g, "'\\''")}'`;

function requestText() {
  const origin = location.origin;
  const body = requestBody();
  if (state.tab === "cli") {
    const args = [];
    for (const s of state.sources) args.push("--src " + shellQuote(s.origin === "file" ? s.name : s.src));
    for (const c of body.commands) args.push("--command " + c);
    for (const [k, v] of Object.entries(body.options || {})) args.push(`--option ${k}=${v}`);
    return `export MEDIAEDIT_URL=${origin} MEDIAEDIT_TOKEN=…\nmediaedit edit create \\\n  ${args.concat(["--wait --output out/"]).join(" \\\n  ")}`;
  }
  const auth = `-H "Authorization: Bearer $MEDIAEDIT_TOKEN"`;
  const uploads = state.sources.filter((s) => s.origin === "file")
    .map((s) => `# ${s.name}, uploaded first (its src is in the answer):\n# curl -sS -X POST ${origin}/v1/uploads ${auth} --data-binary @${shellQuote(s.name)}\n`);
  return uploads.join("") + `curl -sS -X POST ${origin}/v1/edits \\\n  ${auth} \\\n  -H 'Content-Type: application/json' \\\n  -d ${shellQuote(JSON.stringify(body, null, 2))}`;
}

function renderRequest() {
  $("request-text").textContent = requestText();
  for (const tab of ["curl", "cli"]) $("tab-" + tab).setAttribute("aria-selected", String(state.tab === tab));
  const reason = notReady();
  $("run").disabled = reason !== null;
  $("run-hint").textContent = reason || "";
}

/// A dry run of the edit as it stands, 600 ms after the last change.
function schedulePlan() {
  clearTimeout(state.plan.timer);
  if (state.plan.abort) state.plan.abort.abort();
  if (notReady()) { $("plan").replaceChildren(); return; }
  state.plan.timer = setTimeout(async () => {
    const abort = (state.plan.abort = new AbortController());
    $("plan").replaceChildren(el("p", { class: "muted", text: "Checking the sources…" }));
    try {
      const plan = await Api.dryRun(requestBody(), abort.signal);
      clearMarks();
      renderPlan(plan.attributes.assets);
    } catch (e) {
      if (e.name === "AbortError") return;
      $("plan").replaceChildren(errorList(e, "This edit would fail:"));
    }
  }, 600);
}

function renderPlan(assets) {
  let learned = false;
  assets.forEach((a, i) => {
    const source = state.sources[i];
    if (source && !source.format && a.format) { source.format = a.format; learned = true; }
  });
  const size = (o) => (o.width ? ` ${o.width}×${o.height}` : "") + (o.duration ? `, ${o.duration} s` : "");
  $("plan").replaceChildren(el("p", { class: "plan-title", text: "Dry run: the service predicts" }),
    el("ul", {}, ...assets.map((a, i) => el("li", {},
      el("strong", { text: (state.sources[i] || {}).name || a.src }),
      ` — ${a.format.toUpperCase()}${size(a)} → ` +
      a.outputs.map((o) => `${o.count} × ${o.format.toUpperCase()}${size(o)}`).join(", ")))));
  if (learned) { renderSources(); renderPipeline(); renderRequest(); }
}

/// The API's `errors[]`, each with its code and where it points; the fields pointed at
/// are marked.
function errorList(e, title) {
  clearMarks();
  for (const error of e.errors) {
    const pointer = error.source && error.source.pointer;
    const target = pointer && document.querySelector(`[data-pointer="${pointer}"]`);
    if (target) target.classList.add("has-error");
  }
  return el("div", { class: "error-box" }, el("p", { class: "error-title", text: title }),
    el("ul", {}, ...e.errors.map((error) => el("li", {},
      el("code", { text: error.code }),
      error.source && (error.source.pointer || error.source.parameter)
        ? el("span", { class: "muted", text: ` at ${error.source.pointer || error.source.parameter}` }) : null,
      el("div", { text: error.detail || error.title })))));
}

function clearMarks() {
  for (const node of document.querySelectorAll("[data-pointer].has-error")) node.classList.remove("has-error");
}

function pipelineChanged() {
  renderPipeline();
  renderOptions();
  requestChanged();
}

function requestChanged() {
  $("request-errors").replaceChildren();
  renderRequest();
  schedulePlan();
}

function changed() {
  renderSources();
  pipelineChanged();
}
