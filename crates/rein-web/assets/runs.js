// The run viewer: every run in the journal, and one run step by step (what `rein journal
// show RUN` prints): attempts, each step's thought, action, outcome and result, the checks
// with their facts, and the verdict.
import { el, get, notice, errorOf, runRows } from './common.js';

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
    for (const c of t.checks) list.append(el('li', { text: `[${c.passed ? 'ok' : 'FAIL'}] ${c.name} (${c.kind}): ${text(c.facts)}` }));
    out.append(el('h3', { text: 'Checks' }), list);
  }
  if (t.changes.length) {
    const list = el('ul');
    for (const c of t.changes) list.append(el('li', { text: `change ${c.id}: "${c.path}" ${c.state}` }));
    out.append(el('h3', { text: 'Changes' }), list);
  }
}

async function init() {
  const params = new URLSearchParams(window.location.search);
  const run = params.get('run');
  if (run !== null) show(run);
  const result = await get('/api/journal');
  if (!result.ok) { notice(errorOf(result)); return; }
  runRows(document.querySelector('#list tbody'), result.data.shown);
}

init();
