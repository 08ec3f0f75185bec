// The request: the edit as curl or as a CLI line, a dry run of it as it changes (Run
// stays disabled while the dry run says the edit would fail), and the API's errors shown
// by code with the fields they point at marked.

function requestBody() {
  const body = {
    assets: state.sources.map((s) => ({ type: assetType(s.format), src: s.src || `<${s.name}: uploading>` })),
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

/// An asset's `type` for a source of `format`.
function assetType(format) {
  if (SUBTITLE_FORMATS.has(format)) return "subtitles";
  return format && VIDEO_FORMATS.has(format) ? "video" : "image";
}

/// Why the edit cannot be sent yet, or null.
function notReady() {
  if (!Api.token) return "Enter your API token first.";
  if (!state.sources.length) return "Add a source.";
  if (state.sources.some((s) => s.status === "uploading") || state.optionUploads) return "Waiting for the uploads to finish…";
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
  const reason = notReady() || planVerdict();
  $("run").disabled = reason !== null;
  $("run-hint").textContent = reason || "";
}

/// Why the dry run holds the edit back, or null: while it checks the edit as it
/// stands, and when it predicts a failure (a `422`). A dry run that could not answer
/// (the service busy, unreachable) holds nothing back: the edit itself will say.
function planVerdict() {
  if (state.plan.verdict === "checking") return "Checking the edit with a dry run…";
  if (state.plan.verdict === "fails") return "The dry run says this edit would fail (above).";
  return null;
}

/// A dry run of the edit as it stands, 600 ms after the last change.
function schedulePlan() {
  clearTimeout(state.plan.timer);
  if (state.plan.abort) state.plan.abort.abort();
  if (notReady()) {
    state.plan.verdict = "none";
    $("plan").replaceChildren();
    renderRequest();
    return;
  }
  state.plan.verdict = "checking";
  renderRequest();
  state.plan.timer = setTimeout(async () => {
    const abort = (state.plan.abort = new AbortController());
    $("plan").replaceChildren(el("p", { class: "muted", text: "Checking the sources…" }));
    try {
      const plan = await Api.dryRun(requestBody(), abort.signal);
      clearMarks();
      state.plan.verdict = "ok";
      renderPlan(plan.attributes.assets);
    } catch (e) {
      if (e.name === "AbortError") return;
      state.plan.verdict = e.status === 422 ? "fails" : "unknown";
      const title = e.status === 422 ? "This edit would fail:" : "The dry run could not check this edit:";
      $("plan").replaceChildren(errorList(e, title));
    }
    renderRequest();
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
      el("div", { class: "error-detail" }, ...withCode(error.detail || error.title))))));
}

function clearMarks() {
  for (const node of document.querySelectorAll("[data-pointer].has-error")) node.classList.remove("has-error");
}
