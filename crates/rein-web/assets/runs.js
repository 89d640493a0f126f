// The run viewer: every run in the journal and every conversation in chat.db, and one of
// them step by step. A run (what `rein journal
// show RUN` prints): attempts, each step's thought, action, outcome and result, the checks
// with their facts, and the verdict.
import { el, get, notice, errorOf, runRows, row, checkMark } from './common.js';

function text(v) { return typeof v === 'string' ? v : JSON.stringify(v, null, 1); }

function kv(pairs) {
  const dl = el('dl');
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === '') continue;
    dl.append(el('dt', { text: k }), el('dd', {}, el('pre', { text: text(v) })));
  }
  return dl;
}

async function show(run) {
  const result = await get(`/api/journal/${encodeURIComponent(run)}`);
  const out = document.getElementById('trace');
  if (!result.ok) { notice(errorOf(result)); return; }
  const t = result.data.shown;
  const r = t.run;
  const verdict = r.verdict && typeof r.verdict === 'object' ? r.verdict : null;
  const passed = r.status === 'pass';
  out.replaceChildren(
    el('h2', { text: `Run ${r.id}: ${r.mission_id || r.kind} with ${r.model || '-'}` }),
    el('p', { class: `verdict ${passed ? 'pass' : r.status === 'fail' ? 'fail' : 'running'}`,
      text: `${String(r.status).toUpperCase()}` + (verdict && verdict.reason ? `: ${verdict.reason}` : '') }),
    el('p', { class: 'muted', text: `${r.steps} steps · ${r.prompt_tokens} prompt and ${r.completion_tokens} completion tokens · workspace ${r.workspace || '-'}` }));
  const calls = new Map();
  for (const step of t.steps) {
    const call = step.call;
    out.append(el('article', { class: 'step', attrs: { 'aria-label': `Step ${step.seq}` } },
      el('strong', { text: `Step ${step.seq} · ${step.kind}` }),
      kv([
        ['thought', step.thought],
        ['action', step.action],
        ['parameters', call ? call.arguments : ''],
        ['gate', call ? `${call.outcome}${call.reason ? `: ${call.reason}` : ''}` : ''],
        ['result', call ? call.result : step.detail],
        ['tokens', step.prompt_tokens !== null ? `${step.prompt_tokens} prompt, ${step.completion_tokens} completion, ${step.elapsed_ms} ms` : ''],
      ])));
    if (call) calls.set(call.call_id, true);
  }
  if (t.checks.length) {
    const list = el('ul');
    for (const c of t.checks) list.append(el('li', { text: `[${checkMark(c.passed, c.advisory)}] ${c.name} (${c.kind}): ${text(c.facts)}` }));
    out.append(el('h3', { text: 'Checks' }), list);
  }
  if (t.changes.length) {
    const list = el('ul');
    for (const c of t.changes) list.append(el('li', { text: `change ${c.id}: "${c.path}" ${c.state}` }));
    out.append(el('h3', { text: 'Changes' }), list);
  }
}

function when(ms) {
  if (typeof ms !== 'number') return '-';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

function argsText(a) {
  if (!a || typeof a !== 'object') return String(a ?? '');
  return Object.entries(a).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
}

/** One timeline entry of a conversation, as a log line that names its kind in words. */
function entry(item, raw) {
  if (item.kind === 'message') {
    const who = item.role === 'user' ? 'you' : item.role === 'assistant' ? 'rein' : `rein (${item.role} note)`;
    return el('li', { class: item.role === 'user' ? 'you' : 'answer', text: item.content, attrs: { 'data-who': who } });
  }
  const e = item.event || {};
  const r = raw.event || {};
  const line = (kind, text) => el('li', { class: kind, text });
  switch (e.type) {
    case 'session_started':
      return line('route', `session started: actor ${e.actor}${e.decision ? `, decision ${e.decision}` : ', no decision model'} in ${e.workspace}`);
    case 'turn_started':
      return line('route', `turn ${e.turn ?? ''} started`);
    case 'route':
      return line('route', `route: ${e.route.intent} (source: ${e.route.source}, confidence ${(r.route.confidence_bps / 100).toFixed(1)}%)${e.route.note ? ` — ${e.route.note}` : ''}`);
    case 'tool_call':
      return line('tool', `tool call: ${e.tool} ${argsText(e.arguments)} → ${e.outcome}: ${e.summary}`);
    case 'gate_outcome':
      return line('gate', `write gate on "${e.path}": ${r.review.allowed ? 'passed' : 'held'} (${r.review.confidence_bps} bps, floor ${r.review.floor_bps}, source ${e.review.source})`);
    case 'hold':
      return line('hold', `Held (no approval card, nothing written): the change to "${e.path}" — ${e.reason} (${r.confidence_bps} bps)`);
    case 'approval_requested': {
      const node = line('card-line', `approval ${e.approval} requested: ${e.tool} "${e.path}"`);
      node.append(el('pre', { class: 'diff', text: e.diff }));
      return node;
    }
    case 'approval_decided':
      return line('tool', `approval ${e.approval}: ${r.decision === 'allow_once' ? 'allowed once' : 'denied; nothing was written'} at ${when(r.decided_at)}`);
    case 'approval_expired':
      return line('hold', `expired without a decision (nothing was written): approval ${(r.approvals || []).join(', ')}`);
    case 'approval_applied':
      return line('answer', `approval ${e.approval} applied to "${e.path}" as change ${e.change_id}`);
    case 'approval_failed':
      return line('error', `approval ${e.approval} not applied: ${e.reason}`);
    case 'caution':
      return line('caution', `Caution: the answer is not well supported by what was read (${r.review.confidence_bps} bps, below ${r.review.floor_bps}): ${e.review.reason}`);
    case 'turn_ended':
      return line(r.status === 'answered' ? 'answer' : 'stop', `turn ended [${e.status}]: ${e.message}`);
    case 'error':
      return line('error', e.message);
    default:
      return line('tool', `${e.type}: ${JSON.stringify(e)}`);
  }
}

async function showConversation(id) {
  const result = await get(`/api/conversations/${encodeURIComponent(id)}`);
  const out = document.getElementById('trace');
  if (!result.ok) { notice(errorOf(result)); return; }
  const v = result.data.shown;
  const raw = result.data.conversation;
  const c = v.conversation;
  const log = el('ol', { class: 'log', attrs: { 'aria-label': 'Conversation step by step' } });
  v.timeline.forEach((item, i) => log.append(entry(item, raw.timeline[i])));
  const cards = el('table', { class: 'table', attrs: { 'aria-label': 'Approval cards' } },
    el('thead', {}, el('tr', {}, ...['card', 'change', 'state', 'decided at', 'note'].map((h) => el('th', { text: h, attrs: { scope: 'col' } })))));
  const body = el('tbody');
  if (!v.approvals.length) body.append(el('tr', {}, el('td', { text: 'no approval cards', attrs: { colspan: '5' } })));
  v.approvals.forEach((a, i) => {
    const r = raw.approvals[i];
    body.append(row([`approval ${a.id}`, `${a.tool} "${a.path ?? ''}"`, a.status, when(r.decided_at), a.note ?? '']));
  });
  cards.append(body);
  const turns = el('ul');
  for (const t of v.turn_runs) turns.append(el('li', { text: `turn ${t.id}: ${t.status}${t.note ? ` — ${t.note}` : ''}` }));
  out.replaceChildren(
    el('h2', { text: `Conversation ${c.id} in ${c.workspace}` }),
    el('p', { class: 'muted', text: `actor ${c.model || '-'} · started ${when(raw.conversation.created_at)} · ${v.turns.length} messages · ${v.turn_runs.length} turns` }),
    el('h3', { text: 'Step by step' }), log,
    el('h3', { text: 'Approval cards' }), cards,
    el('h3', { text: 'Turns' }), turns);
}

async function init() {
  const params = new URLSearchParams(window.location.search);
  const run = params.get('run');
  const conversation = params.get('conversation');
  if (run !== null) show(run);
  else if (conversation !== null) showConversation(conversation);
  const result = await get('/api/journal');
  if (!result.ok) { notice(errorOf(result)); return; }
  runRows(document.querySelector('#list tbody'), result.data.shown);
  const chats = await get('/api/conversations');
  if (!chats.ok) { notice(errorOf(chats)); return; }
  const tbody = document.querySelector('#conversations tbody');
  tbody.replaceChildren();
  const list = [...chats.data.shown].reverse();
  const rawList = [...chats.data.conversations].reverse();
  if (!list.length) tbody.append(el('tr', {}, el('td', { text: 'no conversations yet', attrs: { colspan: '4' } })));
  list.forEach((c, i) => {
    const link = el('a', { text: `conversation ${c.id}`, attrs: { href: `/runs?conversation=${encodeURIComponent(rawList[i].id)}` } });
    tbody.append(row([link, c.workspace, c.model || '-', when(rawList[i].created_at)]));
  });
}

init();
