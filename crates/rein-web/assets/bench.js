// The bench page: pick models and a task (or a Try chip), Run; each model's run streams one
// trace card per step (thought, action, parameters, gate outcome, result); at the end the
// verdict sits at the top with its reasons, then the final files, variables and action log.
import { el, post, get, notice, errorOf, listen, runRows } from './common.js';

const $ = (id) => document.getElementById(id);

function text(v) { return typeof v === 'string' ? v : JSON.stringify(v); }

function params(shownParams) {
  if (!shownParams || typeof shownParams !== 'object') return text(shownParams ?? '');
  return Object.entries(shownParams).map(([k, v]) => `${k}: ${text(v)}`).join('\n');
}

function kv(pairs) {
  const dl = el('dl');
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === '') continue;
    dl.append(el('dt', { text: k }), el('dd', {}, el('pre', { text: v })));
  }
  return dl;
}

function stepCard(sh) {
  return el('article', { class: 'step', attrs: { 'aria-label': `Step ${sh.step}` } },
    el('strong', { text: `Step ${sh.step}` + (sh.attempt > 1 ? ` (attempt ${sh.attempt})` : '') + ` · ${sh.kind}` }),
    kv([
      ['thought', sh.thought],
      ['action', sh.action],
      ['parameters', sh.parameters ? params(sh.parameters) : ''],
      ['gate', sh.outcome],
      ['result', sh.summary],
      ['tokens', `${sh.prompt_tokens} prompt (${sh.cached_tokens} cached), ${sh.completion_tokens} completion, ${sh.elapsed_ms} ms`],
    ]));
}

function panel(model) {
  const verdict = el('p', { class: 'verdict running', text: 'RUNNING…', attrs: { role: 'status' } });
  const reasons = el('ul', { class: 'reasons' });
  const steps = el('div', { class: 'steps' });
  const end = el('div', { class: 'end' });
  const live = el('pre', { class: 'live', attrs: { 'aria-label': 'The model\'s reply as it streams' } });
  const node = el('section', { class: 'result', attrs: { 'aria-label': `Run with ${model}` } },
    el('h3', { text: model }), verdict, reasons,
    el('h4', { text: 'Trace' }), steps,
    el('h4', { text: 'Live model output' }), live, end);
  $('results').append(node);
  return { node, verdict, reasons, steps, end, live };
}

function finish(p, sh) {
  const passed = sh.verdict === 'pass';
  p.verdict.className = `verdict ${passed ? 'pass' : 'fail'}`;
  p.verdict.textContent = `${passed ? 'PASS' : 'FAIL'}: ${sh.reason}`;
  p.reasons.replaceChildren();
  for (const r of sh.requirements || []) {
    const mark = r.passed === true ? 'ok' : r.passed === false ? 'FAIL' : '?';
    p.reasons.append(el('li', { text: `[${mark}] ${r.what} (inferred: ${r.because})` }));
  }
  const files = (sh.sandbox && sh.sandbox.files) || {};
  const vars = (sh.sandbox && sh.sandbox.variables) || {};
  const fileList = el('div', { class: 'kv' });
  if (!Object.keys(files).length) fileList.append(el('span', { class: 'muted', text: 'no files' }));
  for (const [name, content] of Object.entries(files)) {
    fileList.append(el('span', { class: 'mono', text: name }), el('pre', { text: content }));
  }
  const varList = el('div', { class: 'kv' });
  if (!Object.keys(vars).length) varList.append(el('span', { class: 'muted', text: 'no variables' }));
  for (const [name, value] of Object.entries(vars)) {
    varList.append(el('span', { class: 'mono', text: name }), el('pre', { text: text(value) }));
  }
  const actions = el('table', { class: 'table' },
    el('thead', {}, el('tr', {}, el('th', { text: 'step' }), el('th', { text: 'action' }), el('th', { text: 'parameters' }), el('th', { text: 'outcome' }))));
  const body = el('tbody');
  for (const a of sh.actions || []) {
    body.append(el('tr', {}, el('td', { text: a.step }), el('td', { text: a.action }),
      el('td', {}, el('pre', { text: params(a.parameters) })), el('td', { text: a.outcome })));
  }
  actions.append(body);
  p.end.append(el('h4', { text: 'Final files' }), fileList,
    el('h4', { text: 'Variables' }), varList,
    el('h4', { text: 'Action log' }), actions,
    el('p', { class: 'muted', text: `journal run ${sh.run} · contract ${String(sh.contract_sha256 || '').slice(0, 12)}` }));
}

function onRunEvent(p, ev, sh, ended) {
  if (ended) { refreshPast(); return; }
  switch (ev.event) {
    case 'run_started':
      p.steps.append(el('p', { class: 'muted', text: `run ${sh.run}: ${sh.mission} with ${sh.model}; caps ${sh.max_turns} turns, ${sh.timeout_secs} s` }));
      break;
    case 'token':
      if (p.fresh) { p.live.textContent = ''; p.fresh = false; }
      p.live.textContent += sh.text;
      break;
    case 'step':
      p.steps.append(stepCard(sh));
      p.fresh = true;
      break;
    case 'cap':
      p.steps.append(el('p', { class: 'notice', text: `cap ${sh.cap}: ${sh.message}` }));
      break;
    case 'finish_refused':
      p.steps.append(el('p', { class: 'notice', text: `finish refused at step ${sh.step}: ${sh.reason}` }));
      break;
    case 'model_notice':
      p.steps.append(el('p', { class: 'notice', text: sh.message }));
      break;
    case 'check':
      p.reasons.append(el('li', { text: `[${ev.passed ? 'ok' : 'FAIL'}] ${sh.id} (${sh.kind}): ${(sh.facts || []).join('; ')}` }));
      break;
    case 'run_ended':
      p.verdict.className = `verdict ${ev.status === 'pass' ? 'pass' : 'fail'}`;
      p.verdict.textContent = `${ev.status.toUpperCase()}: ${sh.reason}`;
      break;
    case 'result':
      finish(p, sh.result);
      break;
    case 'error':
      p.verdict.className = 'verdict fail';
      p.verdict.textContent = `ERROR: ${sh.message}`;
      break;
    default:
      break;
  }
}

async function run(event) {
  event.preventDefault();
  notice('');
  const task = $('task').value;
  const models = [...document.querySelectorAll('#models input:checked')].map((i) => i.value);
  if (!models.length) { notice('choose at least one model'); return; }
  $('results').replaceChildren();
  for (const model of models) {
    const result = await post('/api/runs', { task, model });
    if (!result.ok) { notice(errorOf(result)); return; }
    const p = panel(model);
    listen(`/api/runs/${result.data.run}/events`, (ev, sh, ended) => onRunEvent(p, ev, sh, ended));
  }
}

async function refreshPast() {
  const result = await get('/api/journal');
  if (!result.ok) { notice(errorOf(result)); return; }
  runRows(document.querySelector('#past tbody'), result.data.shown);
  const compare = await get('/api/compare');
  if (!compare.ok) { notice(errorOf(compare)); return; }
  const bars = $('compare');
  bars.replaceChildren();
  const rows = compare.data.models || [];
  if (!rows.length) bars.append(el('p', { class: 'muted', text: 'no finished runs yet' }));
  rows.forEach((raw, i) => {
    const shown = compare.data.shown[i];
    const pct = (x) => `${(100 * x).toFixed(0)}%`;
    const span = el('span', { class: 'barspan' });
    span.style.left = pct(raw.low);
    span.style.width = pct(Math.max(0, raw.high - raw.low));
    const point = el('span', { class: 'barpoint' });
    point.style.left = `calc(${pct(raw.rate)} - 1px)`;
    const label = `${shown.mission} · ${shown.model}`;
    bars.append(el('div', { class: 'barrow' },
      el('span', { text: label }),
      el('span', { class: 'bartrack', attrs: { role: 'img', 'aria-label': `${label}: ${raw.passes} of ${raw.runs} passed, ${pct(raw.rate)}, 95% interval ${pct(raw.low)} to ${pct(raw.high)}` } }, span, point),
      el('span', { class: 'mono', text: `${raw.passes}/${raw.runs} ${pct(raw.rate)} [${pct(raw.low)}–${pct(raw.high)}]` })));
  });
}

async function init() {
  $('setup').addEventListener('submit', run);
  const config = await get('/api/config');
  if (!config.ok) { notice(errorOf(config)); return; }
  const models = $('models');
  config.data.models.forEach((m, i) => {
    const input = el('input', { attrs: { type: 'checkbox', value: m, id: `model-${i}` } });
    input.checked = i === 0;
    models.append(el('label', { attrs: { for: `model-${i}` } }, input, document.createTextNode(` ${m}`)));
  });
  if (!config.data.models.length) {
    notice('no model is available: pull one (`rein models pull NAME`) or start `rein serve --model M`');
  }
  for (const example of config.data.examples) {
    const chip = el('button', { text: example, attrs: { type: 'button' } });
    chip.addEventListener('click', () => { $('task').value = example; $('task').focus(); });
    $('chips').append(chip);
  }
  refreshPast();
}

init();
