// The console's one way to the server: the same bearer-token REST routes
// every other client uses. The token lives in sessionStorage (this tab
// only, gone when it closes), never in a URL, a cookie or a log.

const KEY = "outpost.session";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let session = load();
const listeners = new Set();

function load() {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) || "null");
    return s && typeof s.token === "string" ? s : null;
  } catch {
    return null;
  }
}

/**
 * The signed-in session or null: {token, expires, and what GET /api/whoami
 * said of the caller: kind, name, uid (system users), role, admin}.
 */
export function currentSession() {
  return session;
}

/** Whether the signed-in caller is an administrator (access.md "Roles"). */
export function isAdmin() {
  return !!(session && session.admin);
}

export function signIn(s) {
  session = s;
  sessionStorage.setItem(KEY, JSON.stringify(s));
  listeners.forEach((f) => f(session));
}

export function signOut(reason) {
  session = null;
  sessionStorage.removeItem(KEY);
  listeners.forEach((f) => f(null, reason));
}

/** Calls f(session, reason) when the session starts or ends. */
export function onSession(f) {
  listeners.add(f);
}

/**
 * Asks the server who a token belongs to (GET /api/whoami) and answers the
 * session to sign in with; throws ApiError (401: the token is unknown).
 */
export async function whoami(token, expires) {
  const res = await fetch("api/whoami", { headers: { Authorization: `Bearer ${token}`, Accept: "application/json" }, cache: "no-store" });
  if (!res.ok) throw await errorOf(res);
  const me = await res.json();
  return { token, expires, kind: me.kind, name: me.name, uid: me.uid || "", role: me.role, admin: !!me.admin };
}

/**
 * Asks again who the session is (a role changes while signed in) and, when
 * the answer differs from what the console shows, signs in with it so the
 * pages follow.
 */
export async function refreshSession() {
  if (!session) return;
  const s = session;
  let fresh;
  try {
    fresh = await whoami(s.token, s.expires);
  } catch (e) {
    if (e.status === 401 && session === s) expired(e);
    throw e;
  }
  if (session !== s) return; // signed out or in again meanwhile
  if (["kind", "name", "uid", "role", "admin"].some((k) => fresh[k] !== s[k])) signIn(fresh);
}

function headers(extra) {
  const h = { Accept: "application/json", ...extra };
  if (session) h.Authorization = `Bearer ${session.token}`;
  return h;
}

async function errorOf(res) {
  let msg = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body && typeof body.message === "string") msg = body.message;
  } catch {
    /* not JSON */
  }
  return new ApiError(res.status, msg);
}

function expired(res) {
  if (res.status === 401 && session) signOut("Your session ended (token unknown or expired). Sign in again.");
  // Refused: perhaps an administrator changed this user's role meanwhile.
  if (res.status === 403 && session) refreshSession().catch(() => {});
}

/**
 * Sends a request; body (an object) goes as JSON. Answers the parsed JSON
 * (or text for non-JSON answers); throws ApiError otherwise.
 */
export async function api(method, path, body, { signal } = {}) {
  const init = { method, headers: headers(), signal, cache: "no-store" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) {
    expired(res);
    throw await errorOf(res);
  }
  const type = res.headers.get("Content-Type") || "";
  return type.includes("json") ? res.json() : res.text();
}

/**
 * Downloads an authenticated file and hands it to the browser as a file
 * save (a blob URL: the token never appears in a link).
 */
export async function download(path, fallbackName) {
  const res = await fetch(path, { headers: headers({ Accept: "*/*" }), cache: "no-store" });
  if (!res.ok) {
    expired(res);
    throw await errorOf(res);
  }
  const blob = await res.blob();
  const name = fileNameOf(res.headers.get("Content-Disposition")) || fallbackName;
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  return { name, size: blob.size };
}

function fileNameOf(cd) {
  if (!cd) return "";
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(cd);
  if (star) {
    try {
      return decodeURIComponent(star[1]);
    } catch {
      /* fall through */
    }
  }
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(cd);
  return plain ? plain[1] : "";
}

/**
 * Uploads a file as multipart (field assetfile) with XHR, which reports
 * upload progress: onProgress(sentBytes, totalBytes).
 */
export function upload(path, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    if (session) xhr.setRequestHeader("Authorization", `Bearer ${session.token}`);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded, e.total);
    };
    xhr.onload = () => {
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON */
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(body);
        return;
      }
      if (xhr.status === 401 && session) signOut("Your session ended (token unknown or expired). Sign in again.");
      reject(new ApiError(xhr.status, (body && body.message) || `${xhr.status} ${xhr.statusText}`));
    };
    xhr.onerror = () => reject(new ApiError(0, "the upload failed: the server could not be reached"));
    xhr.onabort = () => reject(new ApiError(0, "the upload was cancelled"));
    const form = new FormData();
    form.append("assetfile", file, file.name);
    xhr.send(form);
  });
}
