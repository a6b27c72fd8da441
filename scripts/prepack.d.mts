export function staleOutputs(dist: string, src: string): string[];
