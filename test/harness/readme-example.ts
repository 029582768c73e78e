/**
 * A README example and what it prints, for tests that run it: the first
 * ```python block of the `## <heading>` section that is followed by
 * "which prints" and a ```text block.
 */

/** The ```python block of the README section whose heading starts with `heading`, and the ```text block it prints. */
export function readmeExample(
  readme: string,
  heading: string,
): { code: string; printed: string } | undefined {
  const section = readme.split(/^## /m).find((s) => s.startsWith(heading));
  const m = /```python\n([\s\S]*?)```\n\nwhich prints\n\n```text\n([\s\S]*?)```/.exec(
    section ?? "",
  );
  return m ? { code: m[1] as string, printed: m[2] as string } : undefined;
}
