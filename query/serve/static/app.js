// The evidence page: asks /v1/ask and shows the whole answer. Every value from the server is set as
// text (textContent), never as HTML: questions, answers and evidence are data, not markup.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function provenance(e) {
  const p = e.provenance || {};
  const where = [p.source];
  if (e.page_title) where.push(`page '${e.page_title}'`);
  if (p.section_path && p.section_path.length) where.push("§ " + p.section_path.join(" / "));
  if (p.table_id !== null && p.table_id !== undefined) where.push(`table ${p.table_id} row ${p.row_index}`);
  if (p.infobox_key) where.push(`infobox ${p.infobox_template}.${p.infobox_key}`);
  if (p.statement_id) where.push(`statement ${p.statement_id} (${p.property})`);
  return where.filter(Boolean).join(", ");
}

function showRoute(route) {
  const list = $("route");
  list.replaceChildren();
  for (const step of route || []) {
    const item = el("li", `${step.mode} — ${step.outcome} (estimate ${step.estimate.toFixed(2)}): ${step.reason}`);
    item.className = step.outcome.replace(" ", "-");
    list.append(item);
  }
}

function showFacts(facts) {
  $("facts-box").hidden = !facts || facts.length === 0;
  const list = $("facts");
  list.replaceChildren();
  for (const f of facts || []) {
    const q = f.qualifiers ? `; ${f.qualifiers}` : "";
    list.append(el("li", `statement ${f.statement_id}: ${f.subject_label || f.subject} (${f.subject}) — ` +
      `${f.property_label || f.property} (${f.property}) — ${f.value}${q} [${f.rank}]`));
  }
}

function showTable(t) {
  $("table-box").hidden = !t;
  if (!t) return;
  $("table-title").textContent = `${t.title} — ${t.source}; ${t.operation}; ${t.total_rows} rows` +
    (t.set_query ? `; set: ${t.set_query}` : "");
  const table = $("table");
  table.replaceChildren();
  const head = el("tr");
  head.append(el("th", "row"));
  for (const c of t.columns) head.append(el("th", `${c.header} (${c.type})`));
  table.append(head);
  const selected = new Set(t.selected);
  for (const r of t.rows) {
    const row = el("tr", null, selected.has(r.row_index) ? "selected" : "");
    row.append(el("td", r.row_index));
    for (const cell of r.cells) row.append(el("td", cell.provenance ? `${cell.text} [${cell.provenance}]` : cell.text));
    table.append(row);
  }
  $("sql").textContent = t.sql + (t.params && t.params.length ? `\n-- params: ${JSON.stringify(t.params)}` : "");
  const test = t.test ? ` ${t.test.name}: statistic ${t.test.statistic}, p ${t.test.p_value} — ${t.test.verdict}` : "";
  $("table-note").textContent = (t.value !== null ? `value: ${t.value}. ` : "") + (t.note || "") + test;
}

function showRefinement(rounds) {
  $("refinement-box").hidden = !rounds || rounds.length === 0;
  const list = $("refinement");
  list.replaceChildren();
  for (const r of rounds || []) {
    const verdict = r.accepted ? "accepted" : `rejected${r.feedback ? ": " + r.feedback : ""}`;
    list.append(el("li", `round ${r.round} (${r.module}): ${r.answer} — ${verdict}` +
      (r.detail ? `; ${r.detail}` : "") + (r.paths.length ? `; paths ${r.paths.slice(0, 3).join(" | ")}` : "")));
  }
}

function showReading(reading) {
  $("reading-box").hidden = !reading;
  if (!reading) return;
  $("reading").textContent = `${reading.model}: ${reading.outcome}; cited ${JSON.stringify(reading.cited)} of ` +
    `${reading.shown} shown; ${reading.prompt_tokens} prompt + ${reading.completion_tokens} completion tokens, ` +
    `${reading.ms.toFixed(0)} ms` + (reading.error ? `; ${reading.error}` : "");
}

function showEvidence(result) {
  const body = $("evidence").querySelector("tbody");
  body.replaceChildren();
  const support = new Set(result.supporting_evidence_ids);
  result.evidence.forEach((e, i) => {
    const supporting = support.has(e.evidence_id);
    const row = el("tr", null, supporting ? "evidence-row supporting" : "evidence-row");
    row.dataset.evidenceId = e.evidence_id;
    row.append(el("td", i + 1), el("td", supporting ? "✓" : "", "mark"), el("td", e.source_type),
      el("td", e.score.toFixed(3)), el("td", e.text), el("td", provenance(e), "provenance"));
    body.append(row);
  });
}

function show(result) {
  const answer = $("answer");
  answer.textContent = result.answer;
  answer.className = result.unknown ? "answer unknown" : "answer";
  $("unit").textContent = result.unit && !result.unknown ? result.unit : "";
  $("confidence").textContent = `confidence ${result.confidence.toFixed(2)}`;
  $("mode").textContent = result.mode;
  $("reader-used").textContent = `reader ${result.reader}`;
  $("version").textContent = `index ${result.index_version}`;
  const s = result.served;
  const served = $("served");
  served.textContent = s.fallback ? `fallback: ${s.fallback_reason}` : `${s.lane} lane, waited ${s.queued_ms.toFixed(0)} ms`;
  served.className = s.fallback ? "pill fallback" : "pill";
  showRoute(result.route);
  showFacts(result.facts);
  showTable(result.table);
  showRefinement(result.refinement);
  showReading(result.reading);
  showEvidence(result);
  const timings = $("timings");
  timings.replaceChildren(...result.timings.map((t) => el("li", `${t.stage} ${t.ms.toFixed(1)} ms`)));
  $("result").hidden = false;
}

function headers() {
  const h = { "Content-Type": "application/json" };
  const token = sessionStorage.getItem("hqa-token");
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

async function ask(event) {
  event.preventDefault();
  const status = $("status");
  const body = {
    question: $("question").value,
    reader: $("reader").value,
    fallback: $("fallback").checked,
  };
  status.className = "";
  status.textContent = "asking…";
  $("submit").disabled = true;
  try {
    const response = await fetch("/v1/ask", { method: "POST", headers: headers(), body: JSON.stringify(body) });
    const data = await response.json();
    if (!response.ok) {
      const retry = response.headers.get("Retry-After");
      status.className = "error";
      status.textContent = `${data.error.code}: ${data.error.message}` + (retry ? ` (retry after ${retry} s)` : "");
      return;
    }
    status.textContent = "";
    show(data);
  } catch (err) {
    status.className = "error";
    status.textContent = `the server could not be reached: ${err}`;
  } finally {
    $("submit").disabled = false;
  }
}

async function readiness() {
  const pill = $("ready");
  try {
    const r = await fetch("/readyz");
    const h = await r.json();
    pill.textContent = r.ok ? `index ${h.version} · ${h.reader} reader` : "opening the index…";
  } catch (err) {
    pill.textContent = "offline";
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("ask").addEventListener("submit", ask);
  const token = $("token");
  token.value = sessionStorage.getItem("hqa-token") || "";
  token.addEventListener("change", () => sessionStorage.setItem("hqa-token", token.value));
  readiness();
});
