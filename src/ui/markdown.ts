import DOMPurify from "dompurify";
import { Marked } from "marked";
import { h } from "./dom.js";

const marked = new Marked({ gfm: true, breaks: true, async: false });

// Links open outside the viewer and tell the target nothing; DOMPurify has
// already dropped javascript:, data: and other non-navigable URLs.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/**
 * Message text as markdown, sanitised: marked turns it into HTML (raw HTML in
 * the text passes through marked untouched), DOMPurify removes everything
 * that could run (script, event handlers, javascript: URLs, forms, styles)
 * before it touches the page. The CSP would block an inline script anyway;
 * this keeps even the attempt out.
 */
export function markdown(source: string): HTMLElement {
  const html = marked.parse(source) as string;
  const el = h("div", { class: "md" });
  el.innerHTML = DOMPurify.sanitize(html, {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
    FORBID_ATTR: ["style"],
  });
  return el;
}
