/** A message for callers: absolute file paths (an operator's layout) become "…"; the log keeps them. */
export const redactPaths = (message: string) => message.replace(/(^|[\s"'(=])\/[^\s"'),;]+/g, '$1…')
