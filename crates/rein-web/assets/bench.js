// The bench page: pick models and an ad-hoc task (or a Try chip), or a suite and one of its
// tasks or a split; Run. Each model's run streams one trace card per step (thought, action,
// parameters, gate outcome, result); at the end of each task its verdict sits at the top with
// its reasons, then the final files, variables and action log. A suite run shows its progress
// (tasks done of all, passes) and can be stopped.
import { el, post, get, notice, errorOf, listen, runRows, checkMark } from './common.js';

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

/** A block for one task's run: verdict, reasons, trace cards, and the end (files, ...). */
function taskBlock(title) {
  const verdict = el('p', { class: 'verdict running', text: 'RUNNING…', attrs: { role: 'status' } });
  const reasons = el('ul', { class: 'reasons' });
  const steps = el('div', { class: 'steps' });
  const end = el('div', { class: 'end' });
  const node = el('div', { class: title ? 'taskrun' : '' },
    title ? el('h4', { text: title }) : null, verdict, reasons,
    el('h4', { text: 'Trace' }), steps, end);
  return { node, verdict, reasons, steps, end };
}

function panel(model, suite) {
  const live = el('pre', { class: 'live', attrs: { 'aria-label': 'The model\'s reply as it streams' } });
  const progress = el('p', { class: 'progress', attrs: { role: 'status' } });
  const tasks = el('div', { class: 'tasks' });
  const node = el('section', { class: 'result', attrs: { 'aria-label': `Run with ${model}` } },
    el('h3', { text: suite ? `${model} · suite ${suite}` : model }));
  const p = { node, live, progress, tasks, suite: Boolean(suite), current: null };
  if (suite) {
    node.append(progress, tasks);
  } else {
    p.current = taskBlock('');
    node.append(p.current.node);
  }
  node.append(el('h4', { text: 'Live model output' }), live);
  $('results').append(node);
  return p;
}

function finish(p, sh) {
  if (!p) return;
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
  p.end.replaceChildren();
  p.end.append(el('h4', { text: 'Final files' }), fileList,
    el('h4', { text: 'Variables' }), varList,
    el('h4', { text: 'Action log' }), actions,
    el('p', { class: 'muted', text: `journal run ${sh.run} · contract ${String(sh.contract_sha256 || '').slice(0, 12)}` }));
}

let running = []; // {run, suite} of this page's runs still going

function progressText(done, total, passes) {
  return `${done} of ${total} tasks done · ${passes} passed`;
}

function onRunEvent(p, ev, sh, ended) {
  if (ended) {
    running = running.filter((r) => r.panel !== p);
    $('stop').disabled = !running.some((r) => r.suite);
    refreshPast();
    return;
  }
  const c = p.current;
  switch (ev.event) {
    case 'suite_started':
      p.progress.textContent = progressText(0, ev.total, 0);
      break;
    case 'task_started':
      p.current = taskBlock(`Task ${ev.index} of ${ev.total}: ${sh.task}`);
      p.tasks.append(p.current.node);
      break;
    case 'task_result':
      finish(c, sh.result);
      p.progress.textContent = progressText(ev.done, ev.total, ev.passes);
      break;
    case 'run_started':
      if (c) c.steps.append(el('p', { class: 'muted', text: `run ${sh.run}: ${sh.mission} with ${sh.model}; caps ${sh.max_turns} turns, ${sh.timeout_secs} s` }));
      break;
    case 'token':
      if (p.fresh) { p.live.textContent = ''; p.fresh = false; }
      p.live.textContent += sh.text;
      break;
    case 'step':
      if (c) c.steps.append(stepCard(sh));
      p.fresh = true;
      break;
    case 'cap':
      if (c) c.steps.append(el('p', { class: 'notice', text: `cap ${sh.cap}: ${sh.message}` }));
      break;
    case 'finish_refused':
      if (c) c.steps.append(el('p', { class: 'notice', text: `finish refused at step ${sh.step}: ${sh.reason}` }));
      break;
    case 'model_notice':
      if (c) c.steps.append(el('p', { class: 'notice', text: sh.message }));
      break;
    case 'check':
      if (c) c.reasons.append(el('li', { text: `[${checkMark(ev.passed, ev.advisory)}] ${sh.id} (${sh.kind}): ${(sh.facts || []).join('; ')}` }));
      break;
    case 'run_ended':
      if (c) {
        c.verdict.className = `verdict ${ev.status === 'pass' ? 'pass' : 'fail'}`;
        c.verdict.textContent = `${ev.status.toUpperCase()}: ${sh.reason}`;
      }
      break;
    case 'result':
      if (p.suite) {
        const r = ev.result;
        p.progress.textContent = `${progressText(r.done, r.total, r.passes)}` +
          (r.stopped ? ` · STOPPED by you; ${r.total - r.done} not run` : ' · FINISHED');
        if (r.stopped && c && c.verdict.classList.contains('running')) {
          c.verdict.className = 'verdict fail';
          c.verdict.textContent = 'STOPPED: this task was cut short by Stop; see the journal for what it did';
        }
      } else {
        finish(c, sh.result);
      }
      break;
    case 'error': {
      const target = c || taskBlock('');
      if (!c) p.node.append(target.node);
      target.verdict.className = 'verdict fail';
      target.verdict.textContent = `ERROR: ${sh.message}`;
      break;
    }
    default:
      break;
  }
}

async function run(event) {
  event.preventDefault();
  notice('');
  const models = [...document.querySelectorAll('#models input:checked')].map((i) => i.value);
  if (!models.length) { notice('choose at least one model'); return; }
  const suiteMode = $('kind-suite').checked;
  let body;
  if (suiteMode) {
    const suite = $('suite').value;
    if (!suite) { notice('no suite is offered; start `rein serve --suite DIR`'); return; }
    const task = $('suite-task').value;
    body = task ? { suite, task } : { suite, split: $('split').value };
  } else {
    body = { task: $('task').value };
  }
  $('results').replaceChildren();
  for (const model of models) {
    const result = await post(suiteMode ? '/api/suite-runs' : '/api/runs', { ...body, model });
    if (!result.ok) { notice(errorOf(result)); return; }
    const p = panel(model, suiteMode ? body.suite : null);
    running.push({ run: result.data.run, suite: suiteMode, panel: p });
    $('stop').disabled = !running.some((r) => r.suite);
    listen(`/api/runs/${result.data.run}/events`, (ev, sh, ended) => onRunEvent(p, ev, sh, ended));
  }
}

async function stop() {
  for (const r of running.filter((x) => x.suite)) {
    const result = await post(`/api/runs/${r.run}/stop`, {});
    if (!result.ok) notice(errorOf(result));
    else r.panel.progress.textContent += ' · stopping (after the current model call)…';
  }
  $('stop').disabled = true;
}

let suites = [];

function showKind() {
  const suiteMode = $('kind-suite').checked;
  $('adhoc').hidden = suiteMode;
  $('suite-setup').hidden = !suiteMode;
}

function fillTasks() {
  const suite = suites.find((s) => s.name === $('suite').value);
  const select = $('suite-task');
  select.replaceChildren(el('option', { text: 'every task of the split below', attrs: { value: '' } }));
  if (!suite) return;
  for (const t of suite.tasks) select.append(el('option', { text: `${t.id} (${t.split}, ${t.category})`, attrs: { value: t.id } }));
  showSplit();
}

function showSplit() {
  const suite = suites.find((s) => s.name === $('suite').value);
  const task = $('suite-task').value;
  $('split').disabled = Boolean(task);
  if (!suite) { $('suite-note').textContent = ''; return; }
  const n = task ? 1 : suite.tasks.filter((t) => $('split').value === 'all' || t.split === $('split').value).length;
  $('suite-note').textContent = `${n} task${n === 1 ? '' : 's'} per model, each in a fresh sandbox, journaled like \`rein bench\`. With a real model one task can take minutes on a small machine; Stop ends the run at its next model call.`;
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
  $('stop').addEventListener('click', stop);
  $('kind-task').addEventListener('change', showKind);
  $('kind-suite').addEventListener('change', showKind);
  $('suite').addEventListener('change', fillTasks);
  $('suite-task').addEventListener('change', showSplit);
  $('split').addEventListener('change', showSplit);
  showKind();
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
    const chip = el('button', { text: example, attrs: { type: 'button', 'aria-label': `Try: ${example}` } });
    chip.addEventListener('click', () => { $('task').value = example; $('task').focus(); });
    $('chips').append(chip);
  }
  suites = config.data.suites || [];
  for (const s of suites) $('suite').append(el('option', { text: `${s.name} (${s.tasks.length} tasks)`, attrs: { value: s.name } }));
  if (!suites.length) $('suite').append(el('option', { text: 'no suite offered', attrs: { value: '' } }));
  fillTasks();
  refreshPast();
}

init();
