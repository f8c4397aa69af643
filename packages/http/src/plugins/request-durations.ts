/** One series: a method, route pattern and status, with its buckets (not cumulative), sum and count. */
interface Series {
  readonly labels: Readonly<{ method: string, route: string, status_code: number }>
  readonly buckets: Float64Array
  sum: number
  count: number
}

/** One method of one route's series by status code, each made on the status' first request. */
export type RouteSeries = Map<number, Series>

/** What prom-client's registry reads from a metric (the shape of its own Histogram.get()). */
interface ExportedValue {
  labels: Record<string, string | number>
  sharedLabels: Series['labels']
  value: number
  metricName: string
}

/**
 * The request latency histogram, in the text prom-client's Histogram writes,
 * without its per-request work: prom-client builds a label object per
 * observation, validates it and hashes its sorted keys into a string to find
 * the series. Here each route gets its series when it is registered, and a
 * request finds its own with two map lookups (method, status) and counts into
 * a fixed array. Registered in a prom-client registry as a metric of its own.
 */
export class RequestDurations {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly all: Series[] = []

  constructor (readonly name: string, readonly help: string, private readonly upperBounds: readonly number[]) {}

  /** Counts one request of `seconds` into the route's series for `status`. */
  observe (byStatus: RouteSeries, method: string, route: string, status: number, seconds: number): void {
    let series = byStatus.get(status)
    if (series === undefined) {
      series = { labels: Object.freeze({ method, route, status_code: status }), buckets: new Float64Array(this.upperBounds.length), sum: 0, count: 0 }
      byStatus.set(status, series)
      this.all.push(series)
    }
    const bounds = this.upperBounds
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        series.buckets[i]!++
        break
      }
    }
    series.sum += seconds
    series.count++
  }

  async get (): Promise<{ name: string, help: string, type: 'histogram', values: ExportedValue[], aggregator: 'sum' }> {
    const values: ExportedValue[] = []
    const bucket = `${this.name}_bucket`
    for (const series of this.all) {
      let cumulative = 0
      this.upperBounds.forEach((le, i) => {
        cumulative += series.buckets[i]!
        values.push({ labels: { le }, sharedLabels: series.labels, value: cumulative, metricName: bucket })
      })
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucket },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count` }
      )
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  reset (): void {
    for (const series of this.all) {
      series.buckets.fill(0)
      series.sum = 0
      series.count = 0
    }
  }
}
