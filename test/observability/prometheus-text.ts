/** One sample of the Prometheus text format: `name{label="value",…} number`. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses the Prometheus text exposition format (comments skipped). */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line)
    if (match === null) throw new Error(`not a Prometheus sample: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return samples
}

/** The value of the sample with this name and (at least) these labels; 0 when there is none yet. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`)
  return found[0]?.value ?? 0
}

export async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(url)
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`)
  return parsePrometheus(await response.text())
}
