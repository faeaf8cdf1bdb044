// The page's only way to the server: the public HTTP API, with the admin
// token from session storage as a bearer token.

const TOKEN_KEY = 'catsrv.token';
const PREFIX = '/api/v1/analytics';

export function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
export function setToken(t) { sessionStorage.setItem(TOKEN_KEY, t.trim()); }
export function clearToken() { sessionStorage.removeItem(TOKEN_KEY); }

// ApiError carries the status and the API's own message.
export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function headers() {
  const h = { Accept: 'application/json' };
  if (token()) h.Authorization = 'Bearer ' + token();
  return h;
}

// messageOf reads the error bodies of the API: {message} for application
// errors, {detail: [{msg, loc}]} for invalid parameters.
async function messageOf(res) {
  try {
    const body = await res.json();
    if (body && typeof body.message === 'string') return body.message;
    if (body && Array.isArray(body.detail)) {
      return body.detail.map((d) => (Array.isArray(d.loc) ? d.loc.slice(1).join('.') + ': ' : '') + d.msg).join('; ');
    }
  } catch (_) { /* not JSON */ }
  return res.status + ' ' + res.statusText;
}

async function request(path, params) {
  const url = PREFIX + path + (params ? '?' + params.toString() : '');
  let res;
  try {
    res = await fetch(url, { headers: headers(), credentials: 'same-origin' });
  } catch (e) {
    throw new ApiError(0, 'The server cannot be reached: ' + e.message);
  }
  if (!res.ok) throw new ApiError(res.status, await messageOf(res));
  return res;
}

export async function getJSON(path, params) {
  return (await request(path, params)).json();
}

// download fetches an export with the token and hands it to the browser
// as a file: a plain link could not carry the Authorization header.
export async function download(path, params, fallbackName) {
  const res = await request(path, params);
  const blob = await res.blob();
  const match = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') || '');
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = match ? match[1] : fallbackName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  return { truncated: res.headers.get('X-Export-Truncated') === 'true', total: res.headers.get('X-Total-Count') };
}

// startLogin starts a provider login (POST /api/v1/auth/<provider>) and
// returns the provider's authorization URL to send the browser to.
export async function startLogin(path) {
  let res;
  try {
    res = await fetch(path, { method: 'POST', headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  } catch (e) {
    throw new ApiError(0, 'The server cannot be reached: ' + e.message);
  }
  if (!res.ok) throw new ApiError(res.status, await messageOf(res));
  const url = (await res.json()).authorization_url;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new ApiError(0, 'The server gave no authorization URL.');
  return url;
}

// cookieSession reports whether the browser holds a login session (the
// access cookie a provider login sets): the memory route answers only then.
export async function cookieSession() {
  try {
    const res = await fetch('/api/v1/auth/memory', { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    return res.ok;
  } catch (_) {
    return false;
  }
}

// logout ends the cookie session; it is idempotent on the server.
export async function logout() {
  try {
    await fetch('/api/v1/auth/logout', { method: 'POST', headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  } catch (_) { /* signed out locally anyway */ }
}

// providers asks whether provider sign-in is offered. Any failure (the
// route does not exist yet) means no.
export async function providers() {
  try {
    const res = await fetch('/api/v1/auth/providers', { headers: { Accept: 'application/json' } });
    if (!res.ok) return [];
    const body = await res.json();
    const list = Array.isArray(body) ? body : body.providers;
    return Array.isArray(list) ? list : [];
  } catch (_) {
    return [];
  }
}

// remove sends DELETE to an API path (absolute, under /api/v1) with the
// admin token; it resolves when the server answered 2xx.
export async function remove(path) {
  let res;
  try {
    res = await fetch(path, { method: 'DELETE', headers: headers(), credentials: 'same-origin' });
  } catch (e) {
    throw new ApiError(0, 'The server cannot be reached: ' + e.message);
  }
  if (!res.ok) throw new ApiError(res.status, await messageOf(res));
}

// optionalJSON is getJSON for a route the server may not have (an older
// server): a 404 or 405 resolves to null, so that its panel is hidden
// rather than the page failing.
export async function optionalJSON(path, params) {
  try {
    return await getJSON(path, params);
  } catch (e) {
    if (e.status === 404 || e.status === 405) return null;
    throw e;
  }
}
