"""WCAG 2.1 contrast of every visible text on a page, measured in Chromium (computed styles).

Each element with text of its own is checked against the background it is painted on: the
nearest opaque background up its ancestors, semi-transparent layers blended in. Large text
(24 px, or 18.66 px bold) needs 3:1, any other 4.5:1 (success criterion 1.4.3). Text over an
image or a gradient is skipped: its background is not one colour.
"""

CONTRAST_JS = r"""(root) => {
  // Any CSS colour (color-mix() computes to color(srgb …) or oklab(…)) as sRGB, by a canvas.
  const ink = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
  const parse = (c) => {
    ink.clearRect(0, 0, 1, 1);
    ink.fillStyle = c;
    ink.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = ink.getImageData(0, 0, 1, 1).data;
    return { r, g, b, a: a / 255 };
  };
  const over = (top, under) => ({
    r: top.r * top.a + under.r * (1 - top.a),
    g: top.g * top.a + under.g * (1 - top.a),
    b: top.b * top.a + under.b * (1 - top.a),
    a: 1,
  });
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const background = (node) => {
    // What is painted under the text: the elements at its centre, from itself down (a button
    // laid over a code block is not painted on its parent's white); its ancestors when the
    // centre is scrolled out of view.
    const box = node.getBoundingClientRect();
    const stack = document.elementsFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    const under = stack.includes(node) ? stack.slice(stack.indexOf(node)) : null;
    const chain = [];
    for (let n = node; n && n.nodeType === 1; n = n.parentElement) chain.push(n);
    const layers = [];
    for (const n of under || chain) {
      const style = getComputedStyle(n);
      if (style.backgroundImage !== "none" && !n.matches("html, body")) return null;
      const c = parse(style.backgroundColor);
      if (c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let result = { r: 255, g: 255, b: 255, a: 1 };
    for (const layer of layers.reverse()) result = over(layer, result);
    return result;
  };
  const failures = [];
  const scope = root || document.body;
  for (const node of scope.querySelectorAll("*")) {
    const own = [...node.childNodes].some((t) => t.nodeType === 3 && t.textContent.trim());
    if (!own || node.closest("[hidden], [aria-hidden=true], .chat-sr-only, svg")) continue;
    const box = node.getBoundingClientRect();
    const style = getComputedStyle(node);
    if (!box.width || !box.height || style.visibility !== "visible") continue;
    if (parseFloat(style.opacity) === 0 || box.width <= 1) continue;
    const bg = background(node);
    if (!bg) continue;
    let fg = parse(style.color);
    fg = over(fg, bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize);
    const bold = parseInt(style.fontWeight, 10) >= 700;
    const large = size >= 24 || (bold && size >= 18.66);
    const needed = large ? 3 : 4.5;
    if (ratio < needed - 0.005) {
      const classes = typeof node.className === "string" ? node.className.trim() : "";
      const name = node.tagName.toLowerCase() + (node.id ? "#" + node.id : "") +
        (classes ? "." + classes.split(/\s+/).join(".") : "");
      const text = node.textContent.trim().slice(0, 40);
      failures.push(`${name} "${text}" ${ratio.toFixed(2)}:1 < ${needed}:1`);
    }
  }
  // An empty field's placeholder is the only text it shows (the panel's "Ask a question…").
  for (const field of scope.querySelectorAll("input[placeholder], textarea[placeholder]")) {
    if (field.value || !field.getBoundingClientRect().width || field.closest("[hidden]")) continue;
    const bg = background(field);
    if (!bg) continue;
    const fg = over(parse(getComputedStyle(field, "::placeholder").color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    if (ratio < 4.5 - 0.005) {
      failures.push(`${field.id || field.name}::placeholder ${ratio.toFixed(2)}:1 < 4.5:1`);
    }
  }
  return failures;
}"""


def contrast_failures(page, selector: str | None = None) -> list[str]:
    """Texts under `selector` (the whole page without one) below WCAG AA contrast."""
    root = page.locator(selector).element_handle() if selector else None
    return page.evaluate(CONTRAST_JS, root)


RATIO_JS = r"""([a, b]) => {
  const ink = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
  const rgb = (c) => {
    ink.fillStyle = c;
    ink.fillRect(0, 0, 1, 1);
    return ink.getImageData(0, 0, 1, 1).data;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const [hi, lo] = [lum(rgb(a)), lum(rgb(b))].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}"""


def contrast_ratio(page, first: str, second: str) -> float:
    """The WCAG contrast ratio of two opaque CSS colours, as Chromium computes them."""
    return page.evaluate(RATIO_JS, [first, second])
