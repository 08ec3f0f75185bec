"use strict";
// The API client of the playground: every call the page makes, with the bearer token,
// and the API's own errors (`{"errors": [...]}`) thrown as an ApiError.

class ApiError extends Error {
  constructor(status, errors) {
    super(errors.map((e) => e.detail || e.title).join(" "));
    this.status = status;
    // [{status, code, title, detail, source: {pointer | parameter}}]
    this.errors = errors;
  }
}

/// An ApiError from a response body that may or may not be our error document.
function apiErrorFrom(status, text) {
  try {
    const body = JSON.parse(text);
    if (Array.isArray(body.errors) && body.errors.length) return new ApiError(status, body.errors);
  } catch (_) { /* not JSON */ }
  const detail = status ? `The server answered ${status}.` : "The server could not be reached.";
  return new ApiError(status, [{ status: String(status), code: "http_" + status, title: "Request failed", detail }]);
}

const Api = {
  token: "",

  headers(extra = {}) {
    return Object.assign({ Authorization: "Bearer " + this.token }, extra);
  },

  async call(method, path, { body, query, signal, headers } = {}) {
    const url = path + (query ? "?" + new URLSearchParams(query) : "");
    const init = { method, headers: this.headers(headers), signal };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw apiErrorFrom(0, "");
    }
    const text = await response.text();
    if (!response.ok) throw apiErrorFrom(response.status, text);
    return text ? JSON.parse(text) : null;
  },

  commands() { return this.call("GET", "/v1/commands"); },
  /// Saves every output of edit `id` as one ZIP (`GET /v1/edits/{id}/archive`, which
  /// needs the token, so fetched here and handed to the browser as a file).
  async downloadArchive(id) {
    const response = await fetch(`/v1/edits/${encodeURIComponent(id)}/archive`, { headers: this.headers() });
    if (!response.ok) throw apiErrorFrom(response.status, await response.text());
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await response.blob());
    link.download = `${id}.zip`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60000);
  },
  listEdits(limit) { return this.call("GET", "/v1/edits", { query: { limit } }); },
  getEdit(id, wait, signal) {
    return this.call("GET", "/v1/edits/" + encodeURIComponent(id), { query: wait ? { wait } : undefined, signal });
  },
  createEdit(body, idempotencyKey) {
    return this.call("POST", "/v1/edits", { body, headers: { "Idempotency-Key": idempotencyKey } });
  },
  listPresets() { return this.call("GET", "/v1/presets"); },
  putPreset(name, body) { return this.call("PUT", "/v1/presets/" + encodeURIComponent(name), { body }); },
  deletePreset(name) { return this.call("DELETE", "/v1/presets/" + encodeURIComponent(name)); },
  dryRun(body, signal) { return this.call("POST", "/v1/edits", { body, query: { dryRun: "true" }, signal }); },
  cancelEdit(id) { return this.call("POST", `/v1/edits/${encodeURIComponent(id)}/cancel`); },
  retryEdit(id) { return this.call("POST", `/v1/edits/${encodeURIComponent(id)}/retry`); },

  /// A direct upload (`POST /v1/uploads`), through XMLHttpRequest for its upload
  /// progress events: `onProgress(fraction)`. Resolves with the Upload document.
  upload(file, onProgress) {
    const xhr = new XMLHttpRequest();
    const done = new Promise((resolve, reject) => {
      xhr.open("POST", "/v1/uploads");
      xhr.setRequestHeader("Authorization", "Bearer " + this.token);
      xhr.setRequestHeader("Content-Type", file.type || "application/octet-stream");
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
      xhr.onload = () => {
        if (xhr.status === 201) resolve(JSON.parse(xhr.responseText));
        else reject(apiErrorFrom(xhr.status, xhr.responseText));
      };
      xhr.onerror = () => reject(apiErrorFrom(0, ""));
      xhr.onabort = () => reject(new DOMException("Upload canceled", "AbortError"));
      xhr.send(file);
    });
    return { done, abort: () => xhr.abort() };
  },
};

/// A random Idempotency-Key (crypto.randomUUID needs a secure context; this does not).
function randomKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
