import DOMPurify from "dompurify";
import { Marked } from "marked";
import { showBidiControls } from "./bidi-controls.js";
import { h } from "./dom.js";

const marked = new Marked({ gfm: true, breaks: true, async: false });

// Raw HTML is not markup here: an agent writing "replace <input name=q> with
// <textarea>" talks about tags. With marked's HTML tokenizers answering "no
// match", a `<` falls through to paragraph and text, which marked escapes;
// autolinks (<https://…>) and code spans keep their own tokenizers.
marked.use({
  tokenizer: {
    html: () => undefined,
    tag: () => undefined,
  },
});

// Links open outside the viewer and tell the target nothing; DOMPurify has
// already dropped javascript:, data: and other non-navigable URLs.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/**
 * Message text as markdown whose raw HTML is shown as text (see the
 * tokenizer above). DOMPurify still cleans marked's own output (links with
 * javascript: URLs, anything a marked quirk might let through) before it
 * touches the page; the CSP would block an inline script anyway. Bidi run
 * controls are made visible in the rendered text (in the source, "[U+202E]"
 * followed by "(x)" would become a link).
 */
export function markdown(source: string): HTMLElement {
  const html = marked.parse(source) as string;
  const el = h("div", { class: "md" });
  el.innerHTML = DOMPurify.sanitize(html, {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
    FORBID_ATTR: ["style"],
  });
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
    const t = n as Text;
    t.data = showBidiControls(t.data);
  }
  return el;
}
