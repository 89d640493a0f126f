// The cowork page: chat with one workspace through the same events and requests as
// `rein chat --json` (docs/chat-protocol.md). Approval cards show the exact change and offer
// only Allow once / Deny, with a countdown to expiry; holds are shown as holds, not cards.
import { el, post, get, notice, errorOf, listen, clock } from './common.js';

const $ = (id) => document.getElementById(id);
const log = $('log');
let session = null;
let source = null;
let stream = null; // the <li> the actor's reply streams into (as prose: thought, then answer)
let lastStream = null; // the last one, which the turn's answer replaces
const cards = new Map(); // approval id -> {node, state, buttons, timer, deadline, open}
const requestCard = new Map(); // request id -> approval id

function line(kind, text) {
  const node = el('li', { class: kind, text });
  log.append(node);
  node.scrollIntoView({ block: 'nearest' });
  return node;
}

function args(shownArgs) {
  if (!shownArgs || typeof shownArgs !== 'object') return String(shownArgs ?? '');
  return Object.entries(shownArgs)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

function setStatus(text) { $('status').textContent = text; }

async function start() {
  notice('');
  if (source) source.close();
  log.replaceChildren();
  $('cards').replaceChildren();
  cards.clear();
  const workspace = $('workspace').value;
  const result = await post('/api/sessions', workspace ? { workspace } : {});
  if (!result.ok) { notice(errorOf(result)); return; }
  session = result.data.session;
  source = listen(`/api/sessions/${session}/events`, onEvent);
  refreshChanges();
}

function onEvent(ev, sh, ended, prose) {
  if (ended) { setStatus('the session ended; choose Open to start another'); return; }
  if (ev.type !== 'token') stream = null;
  switch (ev.type) {
    case 'session_started':
      setStatus(`conversation ${sh.conversation} in ${sh.workspace} · actor ${sh.actor}` +
        (sh.decision ? ` · decision ${sh.decision}` : ''));
      break;
    case 'turn_started':
      lastStream = null;
      setStatus('working… (Interrupt stops before the next model call)');
      break;
    case 'route': {
      const r = sh.route;
      const pct = (ev.route.confidence_bps / 100).toFixed(1);
      line('route', `route: ${r.intent} (source: ${r.source}, confidence ${pct}%)` + (r.note ? ` — ${r.note}` : ''));
      break;
    }
    case 'token': {
      // The reply is one JSON action; the page shows its thought and its answer as prose.
      if (!stream) { stream = line('stream', ''); lastStream = stream; }
      const p = prose || {};
      if (p.answer) {
        stream.className = 'answer streaming';
        stream.textContent = p.answer;
      } else {
        stream.className = 'stream';
        stream.textContent = p.thought ? `thinking: ${p.thought}` : 'thinking…';
      }
      break;
    }
    case 'tool_call':
      line('tool', `· ${sh.tool} ${args(sh.arguments)} → ${sh.outcome}: ${sh.summary}`);
      break;
    case 'gate_outcome': {
      const r = ev.review;
      line('gate', `write gate on "${sh.path}": ${r.allowed ? 'passed' : 'held'} (${r.confidence_bps} bps, floor ${r.floor_bps}, source ${sh.review.source})`);
      break;
    }
    case 'hold':
      line('hold', `Held (no approval card, nothing written): the change to "${sh.path}" — ${sh.reason} (${ev.confidence_bps} bps)`);
      break;
    case 'approval_requested':
      addCard(ev, sh);
      break;
    case 'approval_decided':
      closeCard(ev.approval, ev.decision === 'allow_once' ? 'allowed once; applying…' : 'denied; nothing was written');
      line('tool', `Approval ${ev.approval}: ${ev.decision === 'allow_once' ? 'allowed once' : 'denied; nothing was written'}`);
      break;
    case 'approval_expired':
      for (const id of ev.approvals) closeCard(id, 'expired without a decision; nothing was written');
      line('hold', `Expired without a decision (nothing was written): approval ${ev.approvals.join(', ')}`);
      break;
    case 'approval_applied':
      closeCard(ev.approval, `applied as change ${ev.change_id} (undo it under Applied changes)`);
      line('answer', `Applied approval ${ev.approval} to "${sh.path}" as change ${ev.change_id}.`);
      refreshChanges();
      break;
    case 'approval_failed':
      closeCard(ev.approval, `not applied: ${sh.reason}`);
      line('error', `Approval ${ev.approval} was not applied: ${sh.reason}`);
      break;
    case 'caution':
      line('caution', `Caution: this answer is not well supported by what was read (${ev.review.confidence_bps} bps, below ${ev.review.floor_bps}): ${sh.review.reason}`);
      break;
    case 'turn_ended':
      if (ev.status === 'answered' && lastStream && lastStream.classList.contains('streaming')) {
        lastStream.classList.remove('streaming');
        lastStream.textContent = sh.message;
        log.append(lastStream); // after any caution about it
      } else if (ev.status === 'answered') line('answer', sh.message);
      else line(ev.status === 'proposed' ? 'tool' : 'stop', `[${ev.status}] ${sh.message}`);
      setStatus('ready');
      break;
    case 'error': {
      line('error', sh.message);
      const card = ev.request && requestCard.get(ev.request);
      if (card !== undefined && cards.has(card)) {
        const c = cards.get(card);
        c.said.textContent = `refused: ${sh.message}`;
      }
      break;
    }
    default:
      break;
  }
}

function sideBySide(rows) {
  const table = el('table', { class: 'sbs' },
    el('caption', { class: 'sr', text: 'Side-by-side: removed lines on the left, inserted lines on the right' }));
  table.append(el('colgroup', {},
    el('col', { class: 'n' }), el('col', { class: 'm' }), el('col', { class: 't' }),
    el('col', { class: 'n' }), el('col', { class: 'm' }), el('col', { class: 't' })));
  const body = el('tbody');
  for (const r of rows) {
    if (r.kind === 'gap') {
      body.append(el('tr', { class: 'gap' }, el('td', { text: '⋯ unchanged lines not shown ⋯', attrs: { colspan: '6' } })));
      continue;
    }
    const left = r.kind === 'removed' || r.kind === 'changed';
    const right = r.kind === 'added' || r.kind === 'changed';
    body.append(el('tr', { class: r.kind },
      el('td', { class: 'n', text: r.old_line ?? '' }),
      el('td', { class: 'm', text: left ? '−' : '' }),
      el('td', { class: left ? 'del' : '', text: r.old ?? '' }),
      el('td', { class: 'n', text: r.new_line ?? '' }),
      el('td', { class: 'm', text: right ? '+' : '' }),
      el('td', { class: right ? 'add' : '', text: r.new ?? '' })));
  }
  table.append(body);
  return table;
}

function addCard(ev, sh) {
  const deadline = Date.now() + ev.remaining_ms;
  const state = el('span', { class: 'state', text: 'waiting for you' });
  const left = el('span', { class: 'left' });
  const said = el('p', { class: 'muted' });
  const allow = el('button', { class: 'allow', text: 'Allow once', attrs: { type: 'button' } });
  const deny = el('button', { class: 'deny', text: 'Deny', attrs: { type: 'button' } });
  const details = el('details', { attrs: { open: '' } },
    el('summary', { text: 'Review the exact change' }),
    sideBySide(sh.side_by_side || []),
    el('p', { class: 'muted', text: 'The exact unified diff this card is bound to:' }),
    el('pre', { class: 'diff', text: sh.diff }));
  const node = el('article', { class: 'card', attrs: { 'aria-label': `Approval ${ev.approval}`, 'data-approval': String(ev.approval) } },
    el('h3', { text: `Approval ${ev.approval}: ${sh.tool} "${sh.path}"` }),
    el('p', {}, el('span', { text: 'State: ' }), state, el('span', { text: ' · ' }), left),
    details,
    el('div', { class: 'actions' }, allow, deny),
    said);
  const card = { node, state, left, said, buttons: [allow, deny], deadline, open: true };
  cards.set(ev.approval, card);
  allow.addEventListener('click', () => decide(ev.approval, 'approve'));
  deny.addEventListener('click', () => decide(ev.approval, 'deny'));
  $('cards').prepend(node);
  tickCard(card);
  allow.focus();
}

async function decide(approval, verb) {
  const body = verb === 'deny' ? { approval, reason: 'denied in the web page' } : { approval };
  const result = await post(`/api/sessions/${session}/${verb}`, body);
  const card = cards.get(approval);
  if (!result.ok) {
    if (card) card.said.textContent = `refused: ${errorOf(result)}`;
    notice(errorOf(result));
    return;
  }
  requestCard.set(result.data.request, approval);
}

function closeCard(approval, text) {
  const card = cards.get(approval);
  if (!card) return;
  card.open = false;
  card.state.textContent = text;
  card.left.textContent = '';
  card.node.classList.add('closed');
  for (const b of card.buttons) b.disabled = true;
}

function tickCard(card) {
  if (!card.open) return;
  const ms = card.deadline - Date.now();
  card.left.textContent = ms > 0 ? `expires in ${clock(ms)}` : 'deadline reached; expiring…';
}

setInterval(() => { for (const card of cards.values()) tickCard(card); }, 500);

async function refreshChanges() {
  if (session === null) return;
  const list = $('changes');
  const result = await get(`/api/sessions/${session}/changes`);
  if (!result.ok) { notice(errorOf(result)); return; }
  list.replaceChildren();
  const changes = (result.data.shown && result.data.shown.changes) || [];
  if (!changes.length) list.append(el('li', { class: 'muted', text: 'no applied changes in this workspace' }));
  for (const c of changes) {
    const item = el('li', { attrs: { 'data-change': String(c.id) } },
      el('span', { class: 'mono', text: `#${c.id}` }),
      el('span', { text: `${c.kind} "${c.path}" · ${c.state}` + (c.undo_of ? ` (undo of #${c.undo_of})` : '') + (c.undone_by ? ` (undone by #${c.undone_by})` : '') }));
    if (c.state === 'committed' && !c.undone_by) {
      const undo = el('button', { text: 'Undo', attrs: { type: 'button', 'aria-label': `Undo change ${c.id}` } });
      undo.addEventListener('click', async () => {
        const r = await post(`/api/sessions/${session}/undo`, { change: Number(c.id) });
        if (!r.ok) notice(errorOf(r));
        else { notice(''); line('answer', `Undid change ${c.id}: "${r.data.shown.path}" (now change ${r.data.shown.change_id}).`); }
        refreshChanges();
      });
      item.append(undo);
    }
    list.append(item);
  }
}

async function send(event) {
  event.preventDefault();
  const text = $('text').value;
  if (session === null) { notice('no session is open; choose a workspace and Open'); return; }
  // Shown before it is sent, so it comes before the events that answer it.
  const mine = line('you', text);
  const result = await post(`/api/sessions/${session}/message`, { text });
  if (!result.ok) {
    mine.textContent = `${text} (not sent: ${errorOf(result)})`;
    notice(errorOf(result));
    return;
  }
  notice('');
  $('text').value = '';
}

async function init() {
  $('composer').addEventListener('submit', send);
  $('text').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) $('composer').requestSubmit();
  });
  $('interrupt').addEventListener('click', async () => {
    if (session === null) return;
    const r = await post(`/api/sessions/${session}/interrupt`, {});
    if (!r.ok) notice(errorOf(r));
  });
  $('start').addEventListener('click', start);
  $('refresh').addEventListener('click', refreshChanges);
  const config = await get('/api/config');
  if (!config.ok) { notice(errorOf(config)); return; }
  const select = $('workspace');
  for (const w of config.data.workspaces) select.append(el('option', { text: w, attrs: { value: w } }));
  if (!config.data.workspaces.length) {
    notice('no workspace was given to `rein serve`; restart it with --workspace DIR to chat with a folder');
    return;
  }
  start();
}

init();
