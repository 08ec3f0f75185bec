// Presets (`/v1/presets`): the current pipeline and its options saved under a name, the
// organization's presets listed, one applied (its commands and options fill the
// pipeline) or deleted.

/// The text of an option value, as typed into the page.
const optionText = (value) => (typeof value === "string" ? value : Array.isArray(value) ? value.join(", ") : JSON.stringify(value));

async function loadPresets() {
  if (!Api.token) { $("preset-list").replaceChildren(); return; }
  try {
    const list = await Api.listPresets();
    state.presets = list.data;
    renderPresets();
  } catch (e) {
    $("preset-list").replaceChildren(el("li", { class: "field-error" }, ...withCode(e.message)));
  }
}

function renderPresets() {
  const presets = state.presets || [];
  if (!presets.length) {
    $("preset-list").replaceChildren(el("li", { class: "muted", text: "None yet: compose a pipeline, name it and save it." }));
    return;
  }
  $("preset-list").replaceChildren(...presets.map((preset) => {
    const options = Object.entries(preset.attributes.options || {}).map(([k, v]) => `${k}=${optionText(v)}`);
    return el("li", { class: "preset", attrs: { "data-preset": preset.id } },
      el("div", { class: "preset-body" },
        el("code", { class: "preset-name", text: preset.id }),
        el("div", { class: "muted preset-pipeline", text: preset.attributes.commands.join(" → ") + (options.length ? ` · ${options.join(", ")}` : "") })),
      el("button", { class: "secondary", text: "Apply", attrs: { type: "button", "aria-label": `Apply preset ${preset.id}` }, on: { click: () => applyPreset(preset) } }),
      el("button", { class: "icon-button", text: "×", attrs: { type: "button", "aria-label": `Delete preset ${preset.id}` }, on: { click: () => deletePreset(preset.id) } }));
  }));
}

/// Fills the pipeline with `preset`'s commands and options (the ones typed before go).
function applyPreset(preset) {
  state.commands = preset.attributes.commands.filter((name) => state.catalog.has(name));
  state.options = {};
  for (const [name, value] of Object.entries(preset.attributes.options || {})) state.options[name] = optionText(value);
  presetSaid(`Applied ${preset.id}.`);
  pipelineChanged();
}

async function savePreset(name) {
  const body = requestBody();
  const preset = { commands: body.commands };
  if (body.options) preset.options = body.options;
  try {
    await Api.putPreset(name, preset);
    presetSaid(`Saved ${name}.`);
    await loadPresets();
  } catch (e) {
    $("preset-state").replaceChildren(errorList(e, `The service refused the preset ${name}:`));
  }
}

async function deletePreset(name) {
  try {
    await Api.deletePreset(name);
    presetSaid(`Deleted ${name}.`);
  } catch (e) {
    $("preset-state").replaceChildren(errorList(e, `The preset ${name} could not be deleted:`));
  }
  await loadPresets();
}

function presetSaid(text) {
  $("preset-state").replaceChildren(el("span", { class: "muted", text }));
}

function wirePresets() {
  $("preset-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("preset-name");
    const name = input.value.trim();
    if (!name || !input.checkValidity()) { input.reportValidity(); return; }
    if (!state.commands.length) { presetSaid("Add a command first: a preset is a pipeline."); return; }
    savePreset(name);
  });
  $("refresh-presets").addEventListener("click", loadPresets);
}
