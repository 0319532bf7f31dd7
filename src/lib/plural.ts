/** `1 job`, `2 jobs`: a count with its noun, for problem texts. */
export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`
