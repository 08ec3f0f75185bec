// The options of the pipeline's commands, each typed into the control its catalog entry
// calls for: a list of values, a number in its range, a colour, a text, or a file — an
// option that names a file (`watermark`'s `overlay`: `"format": "uri"` in the catalog)
// is one of this session's uploads or a URL of any length; a file uploaded for it is
// not a source.

/// Whether `spec` names a file (a URL or an upload's `src`).
const isFileOption = (spec) => spec.type === "string" && spec.format === "uri";

/// Whether `spec` is a list of names (`codecs`), typed as names separated by commas.
const isListOption = (spec) => spec.type === "array";

/// The names typed for a list option, in order.
const listItems = (text) => text.split(",").map((v) => v.trim()).filter(Boolean);

/// An option that is a number or a word (`quality`: 1–100 or `auto`: `words` in the
/// catalog): the spec as a plain number's, with its words beside; null for any other.
function numberOrWord(spec) {
  if (!spec.words) return null;
  return { ...spec, words: undefined, also: spec.words };
}

function optionHint(spec) {
  const either = numberOrWord(spec);
  if (either) return `${optionHint(either)} or ${either.also.join(", ")}`;
  const fallback = spec.default === null ? "" : ` · default ${spec.default}`;
  if (isListOption(spec)) return `one or more of ${spec.items.enum.join(", ")}, separated by commas · default ${spec.default.join(", ")}`;
  if (isFileOption(spec)) return "a URL of any length, or one of this session's uploads (pick one, or upload a file here: it is not added as a source)";
  if (spec.type === "string" && spec.enum) return `one of ${spec.enum.join(", ")}${spec.default === null ? "; default: the input's format" : fallback}`;
  if (spec.type === "string" && spec.pattern) return `a colour: #RRGGBB or #RRGGBBAA${fallback}`;
  if (spec.type === "string" && spec.maxLength !== undefined) return `${spec.minLength || 0}–${spec.maxLength} characters${fallback}`;
  if (spec.type === "string") return fallback.replace(" · ", "");
  if (spec.type === "boolean") return `true or false${fallback}`;
  const whole = spec.type === "integer" ? "whole, " : "";
  return `${whole}${spec.minimum} ${spec.exclusiveMinimum ? "<" : "≤"} ${spec.name} ≤ ${spec.maximum}${fallback}`;
}

/// Why the text typed for `spec` is refused, or null.
function optionProblem(spec, text) {
  const either = numberOrWord(spec);
  if (either) return either.also.includes(text) ? null : optionProblem(either, text) && `${spec.name} must be ${optionHint(spec)}.`;
  if (text === "" || spec.enum || spec.type === "boolean") return null;
  if (isListOption(spec)) {
    const items = listItems(text);
    const wrong = items.find((v, i) => !spec.items.enum.includes(v) || items.indexOf(v) !== i);
    return wrong === undefined && items.length ? null : `${spec.name} must be ${optionHint(spec).split(" · ")[0]}, each once.`;
  }
  if (isFileOption(spec)) {
    let url = null;
    try { url = new URL(text); } catch (_) { /* not a URL */ }
    return url && (url.protocol === "http:" || url.protocol === "https:") ? null : `${spec.name} must be an http(s) URL or one of your uploads.`;
  }
  if (spec.type === "string" && spec.pattern) return new RegExp(spec.pattern).test(text) ? null : `${spec.name} must be #RRGGBB or #RRGGBBAA.`;
  if (spec.type === "string") {
    const length = [...text].length;
    if (spec.maxLength !== undefined && length > spec.maxLength) return `${spec.name} is too long: at most ${spec.maxLength} characters.`;
    if (spec.minLength !== undefined && length < spec.minLength) return `${spec.name} is too short: at least ${spec.minLength} characters.`;
    return null;
  }
  const value = Number(text);
  const low = spec.exclusiveMinimum ? value <= spec.minimum : value < spec.minimum;
  const fraction = spec.type === "integer" && !Number.isInteger(value);
  if (!Number.isFinite(value) || low || fraction || value > spec.maximum) return `${spec.name} must be ${optionHint(spec).split(" · ")[0]}.`;
  return null;
}

/// The control an option is typed into (`input` holds its text; `control` is what the
/// row shows): a list for values to pick, a box otherwise, a file picker for a file.
function optionInput(spec, id) {
  if (isFileOption(spec)) return fileOptionInput(spec, id);
  let input;
  const either = numberOrWord(spec);
  if (either) {
    // A box that takes the number or the word, offering the word as it is typed.
    const words = el("datalist", { attrs: { id: id + "-words" } }, ...either.also.map((w) => el("option", { attrs: { value: w } })));
    input = el("input", { attrs: { id, type: "text", list: id + "-words", placeholder: `${either.minimum}–${either.maximum} or ${either.also.join(", ")}` } });
    return { input, control: el("div", {}, input, words) };
  }
  if (spec.enum) {
    const none = spec.default === null ? "the input's format" : `default (${spec.default})`;
    input = el("select", { attrs: { id } }, el("option", { text: none, attrs: { value: "" } }),
      ...spec.enum.filter((v) => v !== "jpg").map((v) => el("option", { text: v, attrs: { value: v } })));
  } else if (spec.type === "boolean") {
    input = el("select", { attrs: { id } }, el("option", { text: `default (${spec.default})`, attrs: { value: "" } }),
      ...["true", "false"].map((v) => el("option", { text: v, attrs: { value: v } })));
  } else if (isListOption(spec)) {
    input = el("input", { attrs: { id, type: "text", placeholder: spec.default.join(", ") } });
  } else if (spec.type === "string") {
    input = el("input", { attrs: { id, type: "text", maxlength: spec.maxLength, placeholder: spec.default || "" } });
  } else {
    const step = spec.type === "integer" ? "1" : "any";
    input = el("input", { attrs: { id, type: "number", step, inputmode: "decimal", min: spec.minimum, max: spec.maximum, placeholder: spec.default === null ? "" : String(spec.default) } });
  }
  return { input, control: input };
}

/// A file option: a URL box (no length limit), the session's uploads to pick from,
/// and a button that uploads a file for this option alone.
function fileOptionInput(spec, id) {
  const input = el("input", { attrs: { id, type: "url", spellcheck: "false", placeholder: "https://example.com/logo.png, or an upload" } });
  const uploads = state.uploads;
  const pick = el("select", { attrs: { id: id + "-upload", "aria-label": `${spec.name}: one of this session's uploads`, disabled: !uploads.length } },
    el("option", { text: uploads.length ? "Pick one of this session's uploads…" : "No uploads yet in this session", attrs: { value: "" } }),
    ...uploads.map((u) => el("option", { text: u.name, attrs: { value: u.src } })));
  const chooser = el("input", { attrs: { id: id + "-file", type: "file", hidden: true } });
  const status = el("span", { class: "muted", attrs: { id: id + "-status", role: "status" } });
  const button = el("button", { class: "secondary", text: "Upload a file…", attrs: { type: "button", id: id + "-upload-button" }, on: { click: () => chooser.click() } });
  const pickedFrom = () => (uploads.some((u) => u.src === input.value.trim()) ? input.value.trim() : "");
  pick.addEventListener("change", () => {
    if (!pick.value) return;
    input.value = pick.value;
    input.dispatchEvent(new Event("input"));
  });
  input.addEventListener("input", () => { pick.value = pickedFrom(); });
  chooser.addEventListener("change", () => {
    const file = chooser.files[0];
    chooser.value = "";
    if (file) uploadForOption(spec, file, status);
  });
  const control = el("div", { class: "file-option" }, input, el("div", { class: "file-option-row" }, pick, button, status), chooser);
  queueMicrotask(() => { pick.value = pickedFrom(); });
  return { input, control };
}

/// Uploads `file` for option `spec` (not as a source): on success it joins the
/// session's uploads and becomes the option's value.
function uploadForOption(spec, file, status) {
  state.optionUploads += 1;
  renderRequest();
  const upload = Api.upload(file, (fraction) => { status.textContent = `uploading ${file.name}: ${Math.round(fraction * 100)} %`; });
  upload.done.then((doc) => {
    state.uploads.push({ name: file.name, src: doc.attributes.src });
    state.options[spec.name] = doc.attributes.src;
    renderOptions();
  }, (e) => {
    status.replaceChildren(el("span", { class: "field-error" }, ...withCode(`${file.name}: ${e.message}`)));
  }).finally(() => {
    state.optionUploads -= 1;
    requestChanged();
  });
}

/// The JSON value of the text typed for `spec`.
function optionValue(spec, text) {
  const either = numberOrWord(spec);
  if (either) return either.also.includes(text) ? text : Number(text);
  if (spec.type === "number" || spec.type === "integer") return Number(text);
  if (spec.type === "boolean") return text === "true";
  if (isListOption(spec)) return listItems(text);
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
    const { input, control } = optionInput(spec, id);
    input.value = state.options[spec.name] || "";
    input.addEventListener("input", () => {
      state.options[spec.name] = input.value.trim();
      if (!state.options[spec.name]) delete state.options[spec.name];
      if (spec.enum) renderPipeline();
      markOption(spec, input);
      requestChanged();
    });
    const row = el("div", { class: isFileOption(spec) ? "option file" : "option", attrs: { "data-pointer": "/options/" + spec.name } },
      el("label", { attrs: { for: id } }, el("code", { text: spec.name }), el("span", { class: "muted", text: ` (${command})` })),
      control,
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
