// Composing an edit: sources (uploaded files or URLs) and the pipeline (only commands
// that take what the step before makes are offered, from GET /v1/commands). The page's
// other parts are in their own files: options.js, request.js, presets.js, result.js,
// chapters.js.

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
  uploads: [], // {name, src}: every upload finished in this session, a source's or an option's
  optionUploads: 0, // uploads for an option (not a source) still under way
  presets: [], // the organization's presets (GET /v1/presets)
  tab: "curl",
  edit: null, // the Edit document shown in the result card
  follow: null, // the long-poll loop following `edit`
  // The dry run: its timer, its request, and its verdict on the edit as it stands
  // ("none", "checking", "ok", "fails": a 422 predicted, "unknown": no answer).
  plan: { timer: null, abort: null, verdict: "none" },
};

const VIDEO_FORMATS = new Set(["mp4", "mov", "webm", "mkv", "avi", "ts", "3gp", "ogv"]);
/// A source of these goes with the videos as the edit's subtitles asset, through no command.
const SUBTITLE_FORMATS = new Set(["srt", "vtt"]);
const EXTENSIONS = { jpg: "jpeg", jpeg: "jpeg", png: "png", webp: "webp", gif: "gif", mp4: "mp4", m4v: "mp4", mov: "mov",
  tif: "tiff", tiff: "tiff", bmp: "bmp", heic: "heic", heif: "heic", avif: "avif", jxl: "jxl", webm: "webm", mkv: "mkv", avi: "avi", ts: "ts", mts: "ts", "3gp": "3gp", "3g2": "3gp", ogv: "ogv", ogg: "ogv", svg: "svg", pdf: "pdf", srt: "srt", vtt: "vtt" };

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
  // JPEG XL: a bare codestream, or the container's signature box.
  if (b[0] === 0xff && b[1] === 0x0a) return "jxl";
  if (ascii(0, 12) === "\0\0\0\x0cJXL \r\n\x87\n") return "jxl";
  if (ascii(0, 5) === "%PDF-") return "pdf";
  // SVG: markup whose first element is <svg> (after a declaration, comments, a DOCTYPE).
  const text = new TextDecoder().decode(b.slice(0, 512)).replace(/^\uFEFF/, "");
  if (/^\s*(<\?[\s\S]*?\?>\s*|<!--[\s\S]*?-->\s*)*(<!DOCTYPE\s+svg|<([\w-]+:)?svg[\s>/])/i.test(text)) return "svg";
  const head = ascii(0, 64).replace(/^\ufeff|^\xef\xbb\xbf/, "");
  if (head.startsWith("WEBVTT")) return "vtt";
  if (/^\d+\r?\n\d+:\d\d:\d\d[,.]\d{3} -->/.test(head)) return "srt";
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
    // An SVG shows as an <img> (no script runs there); a PDF's first page in an <object>.
    if (file.type.startsWith("image/") || file.type === "application/pdf") source.thumb = URL.createObjectURL(file);
    source.document = file.type === "application/pdf";
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
    state.uploads.push({ name: source.name, src: source.src });
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
  if (source && source.playable) URL.revokeObjectURL(source.playable);
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
    const thumb = s.thumb && s.document ? el("object", { class: "thumb", attrs: { data: `${s.thumb}#page=1&toolbar=0`, type: "application/pdf", "aria-label": s.name } })
      : s.thumb ? el("img", { class: "thumb", attrs: { src: s.thumb, alt: "" } })
      : el("span", { class: "thumb icon", text: s.format && VIDEO_FORMATS.has(s.format) ? "▶" : "◇", attrs: { "aria-hidden": "true" } });
    const item = el("li", { class: "source", attrs: { "data-key": s.key, "data-pointer": `/assets/${i}/src` } },
      thumb,
      el("div", { class: "source-body" },
        el("div", { class: "source-name", text: s.name }),
        el("div", { class: "source-meta", text: meta }),
        s.status === "uploading" ? el("progress", { attrs: { max: 1, value: s.progress, "aria-label": `Upload of ${s.name}` } }) : null,
        s.error ? el("div", { class: "field-error" }, ...withCode(s.error.message)) : null),
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
  let formats = state.sources.map((s) => (SUBTITLE_FORMATS.has(s.format) ? null : s.format));
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
