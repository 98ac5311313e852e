// The queue board's login page: a plain form, styled inline, loading nothing (not even from this server).

/** @param {string} s */
const escape = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * @param {{next: string, maxAgeS: number, error?: string}} options
 */
export function loginPage(options) {
  const hours = options.maxAgeS >= 3600 ? `${Math.round(options.maxAgeS / 360) / 10} h` : `${Math.round(options.maxAgeS / 60)} min`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>scdv queues: log in</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1d2430; display: flex; min-height: 100vh; margin: 0; align-items: center; justify-content: center; }
  form { background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.15); width: 22rem; }
  h1 { font-size: 1.25rem; margin: 0 0 1rem; }
  label { display: block; margin-bottom: .4rem; }
  input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; font-size: 1rem; margin-bottom: 1rem; }
  button { padding: .5rem 1.2rem; font-size: 1rem; }
  .error { color: #a40000; margin: 0 0 1rem; }
  .note { color: #5a6270; font-size: .85rem; margin-top: 1rem; }
</style>
</head>
<body>
<form method="post" action="/admin/login">
  <h1>scdv queues</h1>
  ${options.error ? `<p class="error" role="alert">${escape(options.error)}</p>` : ''}
  <label for="key">API key (one of server.apiKeyHashes)</label>
  <input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
  <input type="hidden" name="next" value="${escape(options.next)}">
  <button type="submit">Log in</button>
  <p class="note">The key is not stored in the browser: it gets a session cookie valid for ${hours} (server.adminSessionS).</p>
</form>
</body>
</html>
`;
}
