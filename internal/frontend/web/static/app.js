// Progressive touches only: every page works without this file.
document.addEventListener("keydown", (ev) => {
  // "/" focuses the search box, as on most code hosts.
  if (ev.key === "/" && !["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName)) {
    const q = document.querySelector('.quick input, #search-form input[name="q"]');
    if (q) { ev.preventDefault(); q.focus(); }
  }
});
document.querySelectorAll("form.filters select").forEach((s) => {
  // Changing a filter applies it.
  s.addEventListener("change", () => s.form.requestSubmit());
});
document.querySelectorAll("button.dismiss").forEach((b) => {
  b.addEventListener("click", (ev) => {
    if (!confirm("Dismiss this correction? It will not be offered as a rule again.")) ev.preventDefault();
  });
});
