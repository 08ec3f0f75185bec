// Running an edit and following it: the status and progress live (long polls of one
// second, answered at once when the edit ends), cancel and retry, the outputs previewed
// inline and downloadable, and the organization's recent edits.

const TERMINAL = new Set(["done", "failed", "canceled"]);
const IMAGE_FORMATS = new Set(["jpeg", "png", "webp", "gif", "avif", "jxl"]);
const AUDIO_FORMATS = new Set(["m4a", "mp3", "opus", "oga", "aac", "flac", "wav"]);

async function run() {
  if (notReady()) return;
  $("run").disabled = true;
  $("request-errors").replaceChildren();
  try {
    const edit = await Api.createEdit(requestBody(), randomKey());
    showEdit(edit);
    follow(edit.id);
    loadRecent();
  } catch (e) {
    $("request-errors").replaceChildren(errorList(e, "The service refused the edit:"));
  } finally {
    renderRequest();
  }
}

/// Long-polls the edit until it ends (or another edit is shown).
async function follow(id) {
  const me = {};
  state.follow = me;
  while (state.follow === me) {
    try {
      const edit = await Api.getEdit(id, 1);
      if (state.follow !== me) return;
      showEdit(edit);
      if (TERMINAL.has(edit.attributes.status)) { state.follow = null; loadRecent(); return; }
    } catch (e) {
      if (state.follow !== me) return;
      if (e.status === 404 || e.status === 401) { showResultError(e); state.follow = null; return; }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

function showResultError(e) {
  $("result").replaceChildren(errorList(e, "The edit cannot be read:"));
}

function seconds(from, to) {
  const s = (Date.parse(to) - Date.parse(from)) / 1000;
  return Number.isFinite(s) ? `${s.toFixed(s < 10 ? 2 : 1)} s` : "";
}

function showEdit(edit) {
  state.edit = edit;
  const a = edit.attributes;
  const status = a.status;
  const actions = el("div", { class: "result-actions" },
    !TERMINAL.has(status) ? el("button", { class: "secondary", text: "Cancel", attrs: { type: "button", id: "cancel-edit" }, on: { click: () => act(Api.cancelEdit(edit.id)) } }) : null,
    status === "failed" || status === "canceled" ? el("button", { class: "secondary", text: "Retry", attrs: { type: "button", id: "retry-edit" }, on: { click: () => act(Api.retryEdit(edit.id), true) } }) : null);
  const head = el("div", { class: "result-head" },
    el("span", { class: `badge badge-${status}`, text: status, attrs: { id: "edit-status" } }),
    el("code", { class: "edit-id", text: edit.id }),
    el("span", { class: "muted", text: TERMINAL.has(status) ? "in " + seconds(a.createdAt, a.updatedAt) : "" }),
    actions);
  const parts = [head, el("div", { class: "muted pipeline-line", text: a.commands.join(" → ") })];
  if (!TERMINAL.has(status)) {
    const bar = el("progress", { attrs: { max: 1, "aria-label": "Progress", id: "edit-progress" } });
    if (status === "processing" && a.progress !== undefined) bar.value = a.progress;
    const step = a.step ? `asset ${a.step.asset + 1} · ${a.step.name}` : status === "queued" ? "waiting for a worker" : "";
    const retrying = a.lastError ? ` · attempt ${a.attempt} failed (${a.lastError.code}), retrying` : "";
    parts.push(el("div", { class: "progress-row" }, bar,
      el("span", { text: (a.progress !== undefined ? `${Math.round(a.progress * 100)} % · ` : "") + step + retrying })));
  }
  if (status === "failed" && a.error) {
    parts.push(el("div", { class: "error-box" }, el("p", { class: "error-title", text: "The edit failed:" }),
      el("code", { text: a.error.code }), el("div", { class: "error-detail" }, ...withCode(a.error.detail))));
  }
  if (status === "done") parts.push(outputGallery(a, edit.id));
  $("result").replaceChildren(...parts);
}

async function act(call, followAfter = false) {
  try {
    const edit = await call;
    showEdit(edit);
    if (followAfter) follow(edit.id);
    loadRecent();
  } catch (e) {
    $("result").prepend(errorList(e, "The service refused:"));
  }
}

/// Up to 24 outputs shown; the rest one press away.
/// With several outputs, a button that downloads them all as one ZIP (the archive).
function outputGallery(a, id, limit = 24) {
  const outputs = a.outputs || (a.downloadUrls || []).map((url) => ({ url, format: url.split("?")[0].split(".").pop() }));
  const gallery = el("div", { class: outputs.length > 2 ? "gallery" : "gallery large", attrs: { id: "outputs" } });
  const show = (list) => gallery.append(...list.map((o, i) => outputFigure(o, gallery.children.length + i)));
  show(outputs.slice(0, limit));
  const archive = outputs.length > 1
    ? el("button", { class: "secondary", text: `Download all (ZIP)`, attrs: { type: "button", id: "download-archive" },
      on: { click: () => Api.downloadArchive(id).catch((e) => $("result").prepend(errorList(e, "The archive failed:"))) } })
    : null;
  const wrap = el("div", {}, el("p", { class: "muted", text: `${outputs.length} output${outputs.length === 1 ? "" : "s"}` + (a.cached ? " · from the result cache" : "") }, archive ? " " : null, archive), gallery);
  if (outputs.length > limit) {
    const more = el("button", { class: "secondary", text: `Show all ${outputs.length}`, attrs: { type: "button" },
      on: { click: () => { show(outputs.slice(limit)); more.remove(); } } });
    wrap.append(more);
  }
  return wrap;
}

function outputFigure(o, index) {
  const inline = new URL(o.url, location.href);
  inline.searchParams.set("inline", "1");
  const size = o.width ? `${o.width}×${o.height}` : "";
  const label = `Output ${index + 1}: ${o.format.toUpperCase()} ${size}`.trim();
  const preview = IMAGE_FORMATS.has(o.format)
    ? imagePreview(o, inline.href, label)
    : o.format === "m3u8" ? hlsPlayer(o.url, label)
    : o.format === "mpd" ? el("p", { class: "muted", text: "A DASH manifest over the HLS stream's segments, for DASH players (dash.js, Shaka, ExoPlayer)." })
    : o.format === "vtt" ? (editWritesChapters() ? chaptersPreview(o, label) : storyboardStrip(o.url, label))
    : AUDIO_FORMATS.has(o.format) ? el("audio", { attrs: { src: inline.href, controls: true, preload: "metadata", "aria-label": label } })
    : el("video", { attrs: { src: inline.href, controls: true, muted: true, loop: true, playsinline: true, preload: "metadata", "aria-label": label } });
  const facts = [o.format.toUpperCase(), size, humanBytes(o.bytes), o.duration ? `${o.duration} s` : "", o.frames > 1 ? `${o.frames} frames` : ""];
  return el("figure", { class: "output" }, el("div", { class: "preview" }, preview),
    el("figcaption", {}, el("span", { text: facts.filter(Boolean).join(" · ") }), colourSwatch(o),
      el("a", { text: "Download", attrs: { href: o.url, download: "" } })));
}

async function loadRecent() {
  if (!Api.token) return;
  try {
    const list = await Api.listEdits(8);
    $("recent-list").replaceChildren(...list.data.map((edit) => el("li", {},
      el("button", { class: "recent-item", attrs: { type: "button" }, on: { click: () => openEdit(edit) } },
        el("span", { class: `badge badge-${edit.attributes.status}`, text: edit.attributes.status }),
        el("span", { class: "recent-commands", text: edit.attributes.commands.join(" → ") }),
        el("span", { class: "muted", text: new Date(edit.attributes.createdAt).toLocaleTimeString() })))));
    if (!list.data.length) $("recent-list").replaceChildren(el("li", { class: "muted", text: "None yet." }));
  } catch (e) {
    $("recent-list").replaceChildren(el("li", { class: "field-error" }, ...withCode(e.message)));
  }
}

function openEdit(edit) {
  showEdit(edit);
  if (!TERMINAL.has(edit.attributes.status)) follow(edit.id);
  else state.follow = null;
}

// ---- the token, and start-up ------------------------------------------------------

async function useToken(token) {
  Api.token = token;
  const label = $("token-state");
  if (!token) { label.textContent = "No token"; label.className = "token-state bad"; renderRequest(); return; }
  try {
    await Api.listEdits(1);
    label.textContent = "Connected";
    label.className = "token-state good";
    loadRecent();
    loadPresets();
  } catch (e) {
    label.textContent = e.status === 401 ? "Token refused" : "Not reachable";
    label.className = "token-state bad";
  }
  renderRequest();
  schedulePlan();
}

function wireEvents() {
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const token = $("token").value.trim();
    localStorage.setItem("mediaedit.token", token);
    useToken(token);
  });
  const zone = $("dropzone");
  zone.addEventListener("click", () => $("file-input").click());
  $("file-input").addEventListener("change", (e) => { addFiles([...e.target.files]); e.target.value = ""; });
  for (const type of ["dragenter", "dragover"]) {
    document.addEventListener(type, (e) => { e.preventDefault(); zone.classList.add("dragging"); });
  }
  document.addEventListener("dragleave", (e) => { if (!e.relatedTarget) zone.classList.remove("dragging"); });
  document.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("dragging");
    if (e.dataTransfer.files.length) addFiles([...e.dataTransfer.files]);
  });
  $("url-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("url-input");
    if (!input.value.trim()) return;
    if (!input.checkValidity()) { input.reportValidity(); return; }
    addUrl(input.value.trim());
    input.value = "";
  });
  $("add-command").addEventListener("click", () => {
    const name = $("command-picker").value;
    if (!name) return;
    state.commands.push(name);
    pipelineChanged();
    $("command-picker").focus();
  });
  for (const tab of ["curl", "cli"]) $("tab-" + tab).addEventListener("click", () => { state.tab = tab; renderRequest(); });
  $("copy-request").addEventListener("click", async () => {
    try { await navigator.clipboard.writeText(requestText()); $("copy-request").textContent = "Copied"; } catch (_) {
      getSelection().selectAllChildren($("request-text"));
    }
    setTimeout(() => { $("copy-request").textContent = "Copy"; }, 1500);
  });
  $("run").addEventListener("click", run);
  wirePresets();
  $("refresh-recent").addEventListener("click", loadRecent);
}

async function start() {
  wireEvents();
  const token = localStorage.getItem("mediaedit.token") || "";
  $("token").value = token;
  try {
    const catalog = await Api.commands();
    for (const c of catalog.data) state.catalog.set(c.id, c.attributes);
  } catch (e) {
    $("command-hint").replaceChildren(...withCode("The command catalog could not be loaded: " + e.message));
  }
  changed();
  await useToken(token);
  document.body.dataset.ready = "true";
}

start();

/// An HLS stream in a <video>: natively where the browser plays HLS (Safari), else
/// through hls.js, served by this service and loaded on first use.
function hlsPlayer(url, label) {
  const video = el("video", { attrs: { controls: true, muted: true, playsinline: true, preload: "metadata", "aria-label": label, "data-hls": "true" } });
  if (video.canPlayType("application/vnd.apple.mpegurl")) {
    video.src = url;
    return video;
  }
  loadHlsJs().then((Hls) => {
    if (!Hls.isSupported()) return;
    const hls = new Hls({ enableWorker: false });
    hls.loadSource(url);
    hls.attachMedia(video);
    video.hls = hls;
  }).catch(() => video.replaceWith(el("p", { class: "field-error", text: "The HLS player could not be loaded." })));
  return video;
}

let hlsJs = null;
function loadHlsJs() {
  if (!hlsJs) {
    hlsJs = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/playground/hls.light.min.js";
      script.onload = () => resolve(window.Hls);
      script.onerror = reject;
      document.head.append(script);
    });
  }
  return hlsJs;
}

/// A storyboard's VTT as a scrubbable strip: a slider over its cues, the tile of the
/// cue under it shown from the sheet the cue names.
function storyboardStrip(url, label) {
  const tile = el("div", { class: "storyboard-tile", attrs: { role: "img", "aria-label": label } });
  const time = el("span", { class: "muted", text: "" });
  const slider = el("input", { attrs: { type: "range", min: "0", max: "0", value: "0", "aria-label": `${label}: position` } });
  const box = el("div", { class: "storyboard" }, tile, slider, time);
  fetch(url).then((r) => r.text()).then((text) => {
    const cues = parseCues(text);
    if (!cues.length) return;
    slider.max = String(cues.length - 1);
    const show = () => {
      const c = cues[Number(slider.value)];
      tile.style.width = `${c.w}px`;
      tile.style.height = `${c.h}px`;
      tile.style.backgroundImage = `url("${c.sheet}")`;
      tile.style.backgroundPosition = `-${c.x}px -${c.y}px`;
      time.textContent = `${c.start} → ${c.end}`;
    };
    slider.addEventListener("input", show);
    tile.addEventListener("pointermove", (e) => {
      const rect = tile.getBoundingClientRect();
      slider.value = String(Math.floor(((e.clientX - rect.left) / rect.width) * cues.length));
      show();
    });
    show();
  }).catch(() => box.replaceChildren(el("p", { class: "field-error", text: "The storyboard could not be read." })));
  return box;
}

/// The cues of a storyboard VTT: times, and the sheet and tile each names.
function parseCues(text) {
  const lines = text.split("\n");
  const cues = [];
  for (let i = 0; i < lines.length - 1; i++) {
    const times = lines[i].split(" --> ");
    const target = lines[i + 1].split("#xywh=");
    if (times.length !== 2 || target.length !== 2) continue;
    const [x, y, w, h] = target[1].split(",").map(Number);
    cues.push({ start: times[0], end: times[1], sheet: target[0], x, y, w, h });
  }
  return cues;
}
