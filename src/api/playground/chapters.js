
// ---- chapters ----------------------------------------------------------------------

/// Whether the edit shown wrote chapters: its VTTs are video-scenes' (a cue a scene),
/// not a storyboard's.
function editWritesChapters() {
  const a = state.edit && state.edit.attributes;
  return !!a && a.commands[a.commands.length - 1] === "video-scenes";
}

/// The video the chapters of output `o` are of, as this page can play it: the file
/// picked here for that asset (a local copy), or its URL (not an upload's). None when a command ran
/// before video-scenes: the chapters are then of that command's video, not the source.
function chaptersVideoSrc(o) {
  const a = state.edit.attributes;
  if (a.commands[0] !== "video-scenes") return null;
  const asset = (a.assets || [])[o.asset || 0];
  if (!asset) return null;
  const source = state.sources.find((s) => s.src === asset.src && s.file);
  if (source) {
    source.playable = source.playable || URL.createObjectURL(source.file);
    return source.playable;
  }
  // An upload's URL needs the token, which a <video> cannot send.
  return /^https?:/.test(asset.src) && !asset.src.includes("/v1/uploads/") ? asset.src : null;
}

/// A chapters VTT as the video with its chapters: a `<track kind="chapters">` of the
/// VTT (from a local copy of it, so no cross-origin rule applies) and a list of the
/// chapters, each a button that seeks the video to its start.
function chaptersPreview(o, label) {
  const src = chaptersVideoSrc(o);
  const video = src
    ? el("video", { attrs: { src, controls: true, muted: true, playsinline: true, preload: "metadata", "aria-label": label } })
    : null;
  const list = el("ol", { class: "chapters", attrs: { "aria-label": `${label}: chapters` } });
  const box = el("div", { class: "chapters-preview" }, video, list);
  fetch(o.url).then((r) => r.text()).then((text) => {
    if (video) {
      const vtt = URL.createObjectURL(new Blob([text], { type: "text/vtt" }));
      video.append(el("track", { attrs: { kind: "chapters", src: vtt, srclang: "und", label: "Chapters", default: true } }));
    }
    list.append(...parseChapters(text).map((c) => el("li", {},
      el("button", { class: "chapter", text: `${clock(c.start)} ${c.title}`, attrs: { type: "button", "data-start": String(c.start), disabled: video ? null : true },
        on: { click: () => { video.currentTime = c.start; } } }))));
  }).catch(() => box.replaceChildren(el("p", { class: "field-error", text: "The chapters could not be read." })));
  return box;
}

/// The cues of a chapters VTT: start and end in seconds, and the title.
function parseChapters(text) {
  const seconds = (t) => t.trim().split(":").reduce((sum, part) => sum * 60 + Number(part), 0);
  const lines = text.replace(/\r/g, "").split("\n");
  const chapters = [];
  for (let i = 0; i < lines.length; i++) {
    const times = lines[i].split(" --> ");
    if (times.length !== 2) continue;
    chapters.push({ start: seconds(times[0]), end: seconds(times[1].split(" ")[0]), title: (lines[i + 1] || "").trim() });
  }
  return chapters;
}

/// Seconds as m:ss.
function clock(s) {
  const whole = Math.floor(s);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}
