// Makes a class look like the WebIDL interface it implements: class syntax leaves members
// non-enumerable and the class unnamed to Object.prototype.toString, where WebIDL makes
// attributes and operations enumerable and names the interface.

/** Marks `members` of `cls.prototype` enumerable and sets its toStringTag to `cls.name`. */
export function webidlInterface(cls: { readonly prototype: object; readonly name: string }, members: readonly string[]): void {
  for (const name of members) Object.defineProperty(cls.prototype, name, { enumerable: true });
  Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: cls.name, configurable: true });
}
