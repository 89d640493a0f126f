// Shared helpers of Rein's pages. Everything a model or a file wrote is put on the page with
// textContent (never innerHTML), and always from the server's "shown" copy, where controls and
// bidi characters were already made visible by the terminal's own display helper.

/** An element with text (as text, never HTML), attributes and children. */
export function el(tag, opts = {}, ...children) {
  const node = document.createElement(tag);
  if (opts.class) node.className = opts.class;
  if (opts.text !== undefined && opts.text !== null) node.textContent = String(opts.text);
  for (const [name, value] of Object.entries(opts.attrs || {})) node.setAttribute(name, value);
  for (const child of children) if (child) node.append(child);
  return node;
}

/** POST a JSON command; resolves to {ok, status, data}. */
export async function post(path, body) {
  let response;
  try {
    response = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (e) {
    return { ok: false, status: 0, data: { error: 'the server did not answer; is `rein serve` still running?' } };
  }
  let data = {};
  try { data = await response.json(); } catch (e) { data = {}; }
  return { ok: response.ok, status: response.status, data };
}

/** GET JSON; resolves to {ok, status, data}. */
export async function get(path) {
  let response;
  try {
    response = await fetch(path, { credentials: 'same-origin' });
  } catch (e) {
    return { ok: false, status: 0, data: { error: 'the server did not answer; is `rein serve` still running?' } };
  }
  let data = {};
  try { data = await response.json(); } catch (e) { data = {}; }
  return { ok: response.ok, status: response.status, data };
}

/** Shows (or hides, with an empty message) the page's notice. */
export function notice(message) {
  const node = document.getElementById('notice');
  if (!node) return;
  node.textContent = message || '';
  node.hidden = !message;
}

/** The error message of a failed request, for the person. */
export function errorOf(result) {
  return (result.data && result.data.error) || `the server answered ${result.status}`;
}

/** Listens to a server-sent event stream of {event, shown} documents (a chat token also
 * carries `prose`: the reply so far as thought and answer, escaped); stops at stream_end. */
export function listen(path, onEvent) {
  const source = new EventSource(path);
  source.onmessage = (message) => {
    let doc;
    try { doc = JSON.parse(message.data); } catch (e) { return; }
    if (doc.event && doc.event.type === 'stream_end') {
      source.close();
      onEvent(doc.event, doc.shown, true);
      return;
    }
    onEvent(doc.event, doc.shown, false, doc.prose);
  };
  return source;
}

/** A table row of cells (text only). */
export function row(cells) {
  return el('tr', {}, ...cells.map((c) => (c instanceof Node ? el('td', {}, c) : el('td', { text: c }))));
}

/** A check's mark, as `rein run` prints it: advice (an unqualified semantic check) never
 * decides the verdict, so it is never shown as a failure. */
export function checkMark(passed, advisory) {
  if (advisory) return passed ? 'advice: yes' : 'advice: no (does not decide)';
  return passed ? 'ok' : 'FAIL';
}

/** mm:ss from milliseconds. */
export function clock(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** The rows of the journal's run list (shown copy) for a table body; links to the viewer. */
export function runRows(tbody, shownRuns) {
  tbody.replaceChildren();
  const runs = Array.isArray(shownRuns) ? [...shownRuns].reverse() : [];
  if (!runs.length) {
    tbody.append(el('tr', {}, el('td', { text: 'no runs yet', attrs: { colspan: '6' } })));
    return;
  }
  for (const r of runs) {
    const link = el('a', { text: `run ${r.id}`, attrs: { href: `/runs?run=${encodeURIComponent(r.id)}` } });
    tbody.append(row([link, r.kind, r.mission_id || '-', r.model || '-', r.status, String(r.steps)]));
  }
}
