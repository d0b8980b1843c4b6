// The two packages ship data without types: a Map from every alias to the canonical name.
declare module "unicode-property-aliases-ecmascript" {
  const aliases: ReadonlyMap<string, string>;
  export default aliases;
}

declare module "unicode-property-value-aliases-ecmascript" {
  const aliases: ReadonlyMap<string, ReadonlyMap<string, string>>;
  export default aliases;
}
