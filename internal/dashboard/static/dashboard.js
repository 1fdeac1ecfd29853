// The time slider of a simulation's dashboard: moving it writes the time into the text
// field, letting go of it shows that moment. Without script the text field and the
// links work alone.
(function () {
  var range = document.getElementById("at-range");
  var text = document.getElementById("at");
  var form = document.getElementById("time-control");
  if (!range || !text || !form) { return; }
  range.addEventListener("input", function () { text.value = range.value + "s"; });
  range.addEventListener("change", function () { text.value = range.value; form.submit(); });
})();
