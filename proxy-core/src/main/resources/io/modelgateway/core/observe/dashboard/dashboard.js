// The live dashboard: one EventSource on /dashboard/events, a snapshot first, then one point a second.
// Everything the gateway sends is written with textContent, never as HTML.
'use strict';

(function () {
  const COLUMNS = [
    ['name', 'Name', 'text'],
    ['rps', 'Req/s', 'rate'],
    ['error_rate', 'Errors', 'pct'],
    ['refused_rate', '4xx', 'pct'],
    ['lat_p50', 'p50', 'ms'],
    ['lat_p99', 'p99', 'ms'],
    ['ttft_p50', 'TTFT p50', 'ms'],
    ['ttft_p99', 'TTFT p99', 'ms'],
    ['tokens_per_s', 'Tokens/s', 'rate'],
    ['cost_per_s', 'Cost/s', 'usd'],
    ['requests', 'Requests (5 min)', 'int'],
    ['errors', 'Errors (5 min)', 'int'],
    ['tokens', 'Tokens (5 min)', 'int'],
  ];
  const COLORS = { total: '#2f5bd3', bad: '#c0262d', warn: '#b54708', p50: '#2f5bd3', p99: '#7a2fd3',
    input: '#0e7c86', output: '#2f5bd3', cost: '#b54708' };

  let source = null;
  let selector = new URLSearchParams(location.hash.slice(1)).get('series') || 'total';
  let points = null;
  let state = null;
  let events = 0;
  const charts = {};

  const $ = (s) => document.querySelector(s);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  // ---- numbers as shown

  function fmtRate(v) {
    if (v === null || v === undefined) return '—';
    if (v < 10) return v.toFixed(2);
    if (v < 100) return v.toFixed(1);
    return Math.round(v).toLocaleString('en-US');
  }
  function fmtPct(v) {
    if (v === null || v === undefined) return '—';
    const p = v * 100;
    return (p === 0 ? '0' : p < 10 ? p.toFixed(2) : p.toFixed(1)) + '%';
  }
  function fmtMs(v) {
    if (v === null || v === undefined) return '—';
    if (v < 1) return v.toFixed(3) + ' ms';
    if (v < 10) return v.toFixed(2) + ' ms';
    if (v < 1000) return v.toFixed(1) + ' ms';
    return (v / 1000).toFixed(2) + ' s';
  }
  function fmtInt(v) {
    return v === null || v === undefined ? '—' : Number(v).toLocaleString('en-US');
  }
  function fmtUsd(v) {
    if (!state || !state.costs || v === null || v === undefined) return '—';
    return '$' + (v < 0.01 ? v.toFixed(6) : v.toFixed(4));
  }
  function fmtAgo(ms) {
    if (ms < 0) return 'never';
    const s = Math.round(ms / 1000);
    if (s < 60) return s + ' s ago';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    return (s / 3600).toFixed(1) + ' h ago';
  }
  const FORMATS = { text: (v) => v, rate: fmtRate, pct: fmtPct, ms: fmtMs, int: fmtInt, usd: fmtUsd };

  // ---- the stream

  function setStatus(s, text) {
    document.body.dataset.state = s;
    $('#status').textContent = text || s;
  }

  function connect() {
    if (source) source.close();
    points = null;
    source = new EventSource('/dashboard/events?series=' + encodeURIComponent(selector));
    source.onopen = () => setStatus('live');
    source.onerror = () => {
      if (document.body.dataset.state !== 'stopped') setStatus('reconnecting', 'reconnecting…');
    };
    source.onmessage = (e) => onEvent(JSON.parse(e.data));
  }

  function onEvent(msg) {
    if (msg.type === 'shutdown') {
      setStatus('stopped', 'gateway stopped');
      source.close();
      return;
    }
    if (msg.type === 'snapshot' || !points || points.series !== msg.points.series) {
      points = msg.points;
    } else {
      append(msg.points, msg.state.history_s);
    }
    state = msg.state;
    if (msg.config) renderConfig(msg.config);
    events++;
    setStatus('live');
    render();
    document.body.dataset.events = String(events);
    document.body.dataset.series = points.series;
    document.body.dataset.updated = String(state.now);
  }

  function append(p, keep) {
    for (const k of Object.keys(p)) {
      if (!Array.isArray(p[k])) continue;
      const a = points[k];
      for (const v of p[k]) a.push(v);
      if (a.length > keep) a.splice(0, a.length - keep);
    }
  }

  // ---- drawing

  function render() {
    $('#updated').textContent = 'updated ' + new Date(state.now).toLocaleTimeString('en-GB')
      + ' · since ' + new Date(state.since).toLocaleString('en-GB');
    renderTiles();
    renderSelect();
    for (const d of ['model', 'key', 'provider']) renderSeriesTable(d);
    renderDeployments();
    renderFailures();
    renderCharts();
  }

  function renderTiles() {
    const t = state.total || {};
    const set = (name, text) => { $('.tile[data-tile="' + name + '"] .value').textContent = text; };
    set('rps', fmtRate(t.rps === undefined ? 0 : t.rps));
    set('error_rate', fmtPct(t.error_rate));
    set('lat_p50', fmtMs(t.lat_p50));
    set('lat_p99', fmtMs(t.lat_p99));
    set('ttft_p50', fmtMs(t.ttft_p50));
    set('ttft_p99', fmtMs(t.ttft_p99));
    set('tokens_per_s', fmtRate(t.tokens_per_s === undefined ? 0 : t.tokens_per_s));
    set('cost_per_s', fmtUsd(t.cost_per_s));
    set('in_flight', fmtInt(state.in_flight));
  }

  function renderSelect() {
    const select = $('#series');
    const wanted = [['total', 'all traffic']];
    for (const d of ['model', 'key', 'provider']) {
      for (const r of state[d]) wanted.push([r.selector, d + ': ' + r.name]);
    }
    if (!wanted.some((w) => w[0] === selector)) wanted.push([selector, selector.replace(':', ': ')]);
    const now = Array.from(select.options).map((o) => o.value + '\n' + o.textContent).join('\n');
    if (now !== wanted.map((w) => w[0] + '\n' + w[1]).join('\n')) {
      select.replaceChildren(...wanted.map((w) => {
        const o = el('option', w[1]);
        o.value = w[0];
        return o;
      }));
    }
    select.value = selector;
  }

  function choose(s) {
    if (s === selector) return;
    selector = s;
    history.replaceState(null, '', s === 'total' ? location.pathname : '#series=' + encodeURIComponent(s));
    for (const c of Object.values(charts)) c.setData(c.data.map(() => []));
    connect();
  }

  function renderSeriesTable(dimension) {
    const table = $('#table-' + dimension);
    if (!table.tHead) {
      const head = table.createTHead().insertRow();
      for (const [, label, kind] of COLUMNS) {
        head.appendChild(el('th', label === 'Name' ? dimension[0].toUpperCase() + dimension.slice(1) : label,
          kind === 'text' ? '' : 'num'));
      }
      table.createTBody();
    }
    const rows = state[dimension];
    const body = table.tBodies[0];
    const fresh = [];
    if (rows.length === 0) {
      const tr = el('tr');
      const td = el('td', 'no traffic in the last 5 minutes', 'empty');
      td.colSpan = COLUMNS.length;
      tr.appendChild(td);
      fresh.push(tr);
    }
    for (const r of rows) {
      const tr = el('tr');
      tr.dataset.series = r.selector;
      if (r.selector === selector) tr.className = 'selected';
      tr.addEventListener('click', () => choose(r.selector));
      const values = Object.assign({}, r, { tokens: r.input_tokens + r.output_tokens });
      for (const [key, , kind] of COLUMNS) {
        const td = el('td', FORMATS[kind](values[key]), kind === 'text' ? '' : 'num');
        td.dataset.col = key;
        tr.appendChild(td);
      }
      fresh.push(tr);
    }
    body.replaceChildren(...fresh);
  }

  function renderDeployments() {
    const body = $('#deployments tbody');
    body.replaceChildren(...state.deployments.map((d) => {
      const tr = el('tr');
      tr.dataset.deployment = d.provider + '/' + d.upstream_model;
      tr.appendChild(el('td', d.provider));
      tr.appendChild(el('td', d.upstream_model));
      tr.appendChild(el('td', d.models.join(', ')));
      const state = el('td');
      state.dataset.col = 'rotation';
      state.appendChild(el('span', d.rotation, 'badge ' + d.rotation.replace(' ', '-')));
      tr.appendChild(state);
      for (const [key, text] of [['in_flight', fmtInt(d.in_flight)], ['failures_in_a_row', fmtInt(d.failures_in_a_row)],
        ['failures_window', fmtInt(d.failures_window)], ['last_failure', fmtAgo(d.last_failure_ago_ms)]]) {
        const td = el('td', text, 'num');
        td.dataset.col = key;
        tr.appendChild(td);
      }
      return tr;
    }));
  }

  function renderFailures() {
    const body = $('#failures tbody');
    if (state.failures.length === 0) {
      const tr = el('tr');
      const td = el('td', 'none since the gateway started', 'empty');
      td.colSpan = 5;
      tr.appendChild(td);
      body.replaceChildren(tr);
      return;
    }
    body.replaceChildren(...state.failures.map((f) => {
      const tr = el('tr');
      tr.appendChild(el('td', new Date(f.at).toLocaleTimeString('en-GB')));
      tr.appendChild(el('td', f.provider));
      tr.appendChild(el('td', f.model || '—'));
      tr.appendChild(el('td', f.reason));
      tr.appendChild(el('td', f.retried ? 'no (retried)' : 'yes'));
      return tr;
    }));
  }

  function renderConfig(config) {
    $('#config-models tbody').replaceChildren(...config.models.map((m) => {
      const tr = el('tr');
      tr.appendChild(el('td', m.name));
      tr.appendChild(el('td', m.type));
      tr.appendChild(el('td', m.deployments.map((d) => d.provider + ' (' + d.type + ') → ' + d.model
        + (m.deployments.length > 1 ? ' ×' + d.weight : '')).join(', ')));
      tr.appendChild(el('td', m.strategy.replace('_', ' ')));
      tr.appendChild(el('td', String(m.retries), 'num'));
      tr.appendChild(el('td', m.fallbacks.join(', ') || '—'));
      tr.appendChild(el('td', m.limits || '—'));
      return tr;
    }));
    $('#config-keys tbody').replaceChildren(...config.keys.map((k) => {
      const tr = el('tr');
      tr.appendChild(el('td', k.name));
      tr.appendChild(el('td', k.models.join(', ')));
      tr.appendChild(el('td', (k.limits || '—') + (k.model_limits ? ' (+' + k.model_limits + ' per model)' : '')));
      return tr;
    }));
  }

  // ---- charts (uPlot)

  function chart(id, series, yScale, data) {
    const target = $('#' + id);
    const width = Math.max(300, target.clientWidth);
    if (!charts[id]) {
      const opts = {
        width: width,
        height: 220,
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
        // Always the whole window, the newest second at the right edge.
        scales: { x: { time: true, range: (u, min, max) => [max - (state ? state.history_s : 300), max] }, y: yScale },
        axes: [{ space: 70, values: (u, vals) => vals.map((v) => new Date(v * 1000).toLocaleTimeString('en-GB')) },
          { size: 60, values: (u, vals) => vals.map((v) => (v === null ? '' : fmtAxis(v))) }],
        series: [{}].concat(series),
      };
      if (series.some((s) => s.scale === 'usd')) {
        opts.scales.usd = { auto: true };
        opts.axes.push({ scale: 'usd', side: 1, size: 70, grid: { show: false },
          values: (u, vals) => vals.map((v) => '$' + v) });
      }
      charts[id] = new uPlot(opts, data, target);
    } else {
      if (charts[id].width !== width) charts[id].setSize({ width: width, height: 220 });
      charts[id].setData(data);
    }
  }

  function fmtAxis(v) {
    if (Math.abs(v) >= 1000) return (v / 1000) + 'k';
    return String(+v.toPrecision(3));
  }

  function renderCharts() {
    if (!points || typeof uPlot === 'undefined') return;
    const p = points;
    chart('chart-requests', [
      { label: 'requests', stroke: COLORS.total, width: 1.5 },
      { label: 'errors', stroke: COLORS.bad, width: 1.5 },
      { label: '4xx', stroke: COLORS.warn, width: 1.5 },
    ], { auto: true, range: (u, min, max) => [0, Math.max(1, max)] }, [p.t, p.rps, p.eps, p.refused]);
    const log = { distr: 3, log: 10 };
    chart('chart-latency', [
      { label: 'p50', stroke: COLORS.p50, width: 1.5 },
      { label: 'p99', stroke: COLORS.p99, width: 1.5 },
    ], log, [p.t, p.lat_p50, p.lat_p99]);
    chart('chart-ttft', [
      { label: 'p50', stroke: COLORS.p50, width: 1.5 },
      { label: 'p99', stroke: COLORS.p99, width: 1.5 },
    ], log, [p.t, p.ttft_p50, p.ttft_p99]);
    const tokenSeries = [
      { label: 'input', stroke: COLORS.input, width: 1.5 },
      { label: 'output', stroke: COLORS.output, width: 1.5 },
    ];
    const tokenData = [p.t, p.tokens_in, p.tokens_out];
    if (state.costs) {
      tokenSeries.push({ label: 'cost/s', stroke: COLORS.cost, width: 1.5, scale: 'usd' });
      tokenData.push(p.cost);
      $('#cost-caption').textContent = 'and cost/s (USD)';
    }
    if (charts['chart-tokens'] && charts['chart-tokens'].series.length !== tokenSeries.length + 1) {
      charts['chart-tokens'].destroy(); // costs appeared: one more axis
      delete charts['chart-tokens'];
    }
    chart('chart-tokens', tokenSeries, { auto: true, range: (u, min, max) => [0, Math.max(1, max)] }, tokenData);
  }

  $('#series').addEventListener('change', (e) => choose(e.target.value));
  window.addEventListener('resize', () => { if (points) renderCharts(); });
  connect();
})();
