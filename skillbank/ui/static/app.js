// The page's only script: ask before irreversible writes (forms marked data-confirm).
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) { event.preventDefault(); }
});
