import { Attributes } from './attributes';
import { attributesStringProblem } from './checks';
import type { KeyValue } from './types';

// What a span takes from its resource: the service name, the resource.<name> metadata entries and
// the first string problem of the resource's attributes. All spans of one resource share one
// decoded attribute array (both decoders), so this is worked out once per resource, not once per
// span: a resource of many attributes over 10,000 spans costs its attributes once.

export type ResourceView = { service: string; entries: [string, unknown][]; problem: string };

const views = new WeakMap<KeyValue[], ResourceView>();
const none: ResourceView = { service: 'unknown_service', entries: [], problem: '' };

export function resourceView(attributes: KeyValue[] | undefined): ResourceView {
  if (!attributes) return none;
  let view = views.get(attributes);
  if (!view) {
    const resource = new Attributes(attributes);
    const service = resource.text('service.name', 100) ?? 'unknown_service';
    const entries: [string, unknown][] = [];
    for (const [key, value] of resource.values) if (!resource.used.has(key)) entries.push([`resource.${key}`, value]);
    view = { service, entries, problem: attributesStringProblem(attributes) };
    views.set(attributes, view);
  }
  return view;
}
