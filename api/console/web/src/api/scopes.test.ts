import { describe, expect, it } from "vitest";
import { scopesOf } from "./scopes";

describe("scopesOf", () => {
  it("grants every scope to admin", () => {
    expect(scopesOf(["admin"])).toEqual({ read: true, run: true, author: true, admin: true });
  });
  it("grants only what is listed otherwise", () => {
    expect(scopesOf(["read"])).toEqual({ read: true, run: false, author: false, admin: false });
    expect(scopesOf(["read", "run"])).toEqual({ read: true, run: true, author: false, admin: false });
    expect(scopesOf([])).toEqual({ read: false, run: false, author: false, admin: false });
  });
});
