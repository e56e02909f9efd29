/** Custom attribute values of weclapp entities as the shop reads them (docs/weclapp.md), by their definition. */
import type { ErpCustomAttribute, ErpCustomAttributeDefinition } from './erp.types';

/**
 * The value of the custom attribute `definition` on an entity: boolean (BOOLEAN), the selected value's
 * text (LIST), the string (STRING); null when the entity does not carry it.
 */
export function customAttributeValue(attributes: ErpCustomAttribute[] | undefined, definition: ErpCustomAttributeDefinition): boolean | string | null {
  const a = attributes?.find((x) => x.attributeDefinitionId === definition.id);
  if (!a) return null;
  if (definition.attributeType === 'BOOLEAN') return a.booleanValue ?? null;
  if (definition.attributeType === 'LIST') return definition.selectableValues?.find((v) => v.id === a.selectedValueId)?.value ?? null;
  return a.stringValue ?? null;
}
