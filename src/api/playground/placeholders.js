// What an image output looks like before its preview arrives: its `dominantColor` as a
// swatch (with the value written out) and as the preview's background, and its
// `blurhash` decoded and painted on a small canvas under the image, which covers it
// once loaded.

const BASE83 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";

function decode83(text) {
  let value = 0;
  for (const c of text) {
    const digit = BASE83.indexOf(c);
    if (digit < 0) throw new Error("not a BlurHash");
    value = value * 83 + digit;
  }
  return value;
}

const toLinear = (v) => { const x = v / 255; return x <= 0.04045 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
const toSrgb = (v) => {
  const x = Math.max(0, Math.min(1, v));
  return Math.round((x <= 0.0031308 ? x * 12.92 : 1.055 * Math.pow(x, 1 / 2.4) - 0.055) * 255);
};
const signedPow = (v, e) => Math.sign(v) * Math.pow(Math.abs(v), e);

/// The RGBA pixels (`width`×`height`) a BlurHash stands for (the reference decoder's
/// algorithm: a DC colour and AC cosine components, in linear light).
function decodeBlurhash(hash, width, height) {
  const sizeFlag = decode83(hash[0]);
  const nx = (sizeFlag % 9) + 1;
  const ny = Math.floor(sizeFlag / 9) + 1;
  if (hash.length !== 4 + 2 * nx * ny) throw new Error("not a BlurHash");
  const maxAc = (decode83(hash[1]) + 1) / 166;
  const dc = decode83(hash.slice(2, 6));
  const colours = [[toLinear(dc >> 16), toLinear((dc >> 8) & 255), toLinear(dc & 255)]];
  for (let i = 1; i < nx * ny; i++) {
    const ac = decode83(hash.slice(4 + i * 2, 6 + i * 2));
    colours.push([Math.floor(ac / 361), Math.floor(ac / 19) % 19, ac % 19].map((q) => signedPow((q - 9) / 9, 2) * maxAc));
  }
  const pixels = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sum = [0, 0, 0];
      for (let j = 0; j < ny; j++) {
        for (let i = 0; i < nx; i++) {
          const basis = Math.cos((Math.PI * x * i) / width) * Math.cos((Math.PI * y * j) / height);
          const c = colours[i + j * nx];
          for (let k = 0; k < 3; k++) sum[k] += c[k] * basis;
        }
      }
      const at = 4 * (x + y * width);
      pixels.set([toSrgb(sum[0]), toSrgb(sum[1]), toSrgb(sum[2]), 255], at);
    }
  }
  return pixels;
}

/// A canvas painted with `hash` (null when there is none or it cannot be read).
function blurhashCanvas(hash) {
  if (!hash) return null;
  const width = 32;
  const height = 32;
  try {
    const canvas = el("canvas", { class: "blurhash", attrs: { width, height, "aria-hidden": "true", "data-blurhash": hash } });
    const context = canvas.getContext("2d");
    context.putImageData(new ImageData(decodeBlurhash(hash, width, height), width, height), 0, 0);
    canvas.dataset.painted = "true";
    return canvas;
  } catch (_) {
    return null;
  }
}

/// An image preview over its placeholders: the dominant colour behind, the BlurHash
/// above it, the image on top once it has loaded.
function imagePreview(o, src, label) {
  const image = el("img", { class: "pending", attrs: { src, alt: label, loading: "lazy" } });
  const shown = () => image.classList.remove("pending");
  image.addEventListener("load", shown);
  image.addEventListener("error", shown);
  const box = el("div", { class: "placeholder" }, blurhashCanvas(o.blurhash), image);
  if (o.dominantColor) box.style.backgroundColor = o.dominantColor;
  if (o.width && o.height) {
    // The placeholder has the image's shape, as large as the preview's box allows.
    box.style.aspectRatio = `${o.width} / ${o.height}`;
    box.style[o.width / o.height >= 4 / 3 ? "width" : "height"] = "100%";
    // `faces: true`: each face found, drawn as a box over the image.
    for (const face of o.faces || []) {
      const mark = el("span", { class: "face", attrs: { title: `A face (score ${face.score})` } });
      Object.assign(mark.style, {
        left: `${(100 * face.x) / o.width}%`,
        top: `${(100 * face.y) / o.height}%`,
        width: `${(100 * face.width) / o.width}%`,
        height: `${(100 * face.height) / o.height}%`,
      });
      box.append(mark);
    }
  }
  return box;
}

/// The dominant colour as a swatch with its value written out, or null.
function colourSwatch(o) {
  if (!o.dominantColor) return null;
  const swatch = el("span", { class: "swatch", attrs: { "aria-hidden": "true" } });
  swatch.style.backgroundColor = o.dominantColor;
  return el("span", { class: "dominant", attrs: { title: "The most common colour (dominantColor)" } },
    swatch, el("code", { class: "dominant-value", text: o.dominantColor }));
}
