export { createInMemoryPorts, inMemoryMessageEvents, type InMemoryMessageEvents } from './in-memory.js'
export { repositoryContract, type ContractCase, type RepositoryPorts } from './repository-contract.js'
